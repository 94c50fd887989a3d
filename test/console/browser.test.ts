import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { createWorker } from "merchant-webhooks/bullmq";
import { consoleHandler } from "merchant-webhooks/console";
import { serveConsole } from "merchant-webhooks/node";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { accessibilityProblems, CHROMIUM, consoleBrowser, redriveUntilCompleted } from "./chromium.js";
import { consoleRig } from "./rig.js";

const SHOTS = fileURLToPath(new URL("../../test-output/console/", import.meta.url));
const USER = { username: "ops", password: "console-browser-pw" };

describe("the console in a real browser", () => {
  const prefix = uniquePrefix("console-browser");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
  const { receiver, admin } = consoleRig(store, { name: "browser", prefix });
  let ledgerUp = false;
  const broken = notification("SUBSCRIPTION_RENEW", `WH-ledger-down-${Date.now()}`);
  broken.resource.id = "SUB-LEDGER";
  const worker = createWorker({
    connection: REDIS_URL,
    name: "browser",
    prefix,
    idempotency: store,
    logger: silentLogger(),
    onRenew: async (n) => {
      if (n.id === broken.id && !ledgerUp) throw new Error("ledger unavailable");
    },
    onCancel: async () => {},
    onCreated: async () => {},
  });
  const authorization = `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString("base64")}`;
  const server = createServer(
    serveConsole(
      consoleHandler({
        admin,
        // Basic auth as a merchant might put in front: the challenge makes the browser send its credentials.
        authorize: (request) =>
          request.headers.get("authorization") === authorization ||
          new Response("log in", { status: 401, headers: { "www-authenticate": 'Basic realm="console"' } }),
      }),
    ),
  );
  let browser: Awaited<ReturnType<typeof consoleBrowser>>;
  let origin: string;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium package`).toBe(true);
    mkdirSync(SHOTS, { recursive: true });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const others = ["SUBSCRIPTION_CREATED", "SUBSCRIPTION_RENEW", "SUBSCRIPTION_CANCELLED", "SUBSCRIPTION_RENEW"];
    const bodies = [
      ...others.map((type, i) => {
        const body = notification(type, `WH-${Date.now()}-${i}`);
        body.resource.id = `SUB-${100 + (i % 2)}`;
        body.resource.update_time = new Date(Date.UTC(2026, 10, 20, 8, i)).toISOString();
        return body;
      }),
      broken,
    ];
    for (const body of bodies) {
      const answer = await receiver.handle({
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: json(body),
      });
      expect(answer.status).toBe(200);
    }
    await eventually(
      async () => (await store.get({ id: broken.id, order: { key: "M100200300:SUB-LEDGER" } }))?.state === "failed",
      20_000,
      "the broken one to fail",
    );
    browser = await consoleBrowser(USER);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server.close(resolve));
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  const openPage = () => browser.openPage();

  it("opens the list, opens a failed notification, redrives it and sees it complete", async () => {
    const page = await openPage();
    const a11y: string[] = [];
    await page.goto(`${origin}/console/`);
    await expect.poll(() => page.locator("h1").textContent()).toBe("Overview");
    await page.screenshot({ path: join(SHOTS, "overview.png"), fullPage: true });
    a11y.push(...(await accessibilityProblems(page)));

    await page.getByRole("link", { name: "All", exact: true }).click();
    await page.waitForURL(/\/console\/notifications$/);
    const row = page.locator("tr", { has: page.getByRole("link", { name: broken.id }) });
    await expect.poll(() => row.locator(".state").textContent()).toBe("failed");
    expect(await page.locator("tbody tr").count()).toBe(5);
    await page.screenshot({ path: join(SHOTS, "list.png"), fullPage: true });
    a11y.push(...(await accessibilityProblems(page)));

    await page.locator("select[name=state]").selectOption("failed");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/state=failed/);
    expect(await page.locator("tbody tr").count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, "list-failed.png"), fullPage: true });
    a11y.push(...(await accessibilityProblems(page)));

    await page.getByRole("link", { name: broken.id }).click();
    await page.waitForURL(new RegExp(`/console/notifications/${broken.id}$`));
    await expect.poll(() => page.locator("h1").textContent()).toBe(broken.id);
    expect(await page.locator("table .state").first().textContent()).toBe("failed");
    expect(await page.locator("ol.timeline").textContent()).toContain("failed");
    await page.screenshot({ path: join(SHOTS, "notification-failed.png"), fullPage: true });
    a11y.push(...(await accessibilityProblems(page)));

    // The dead letters, counted for a bulk redrive first.
    await page.getByRole("link", { name: "Dead letters" }).click();
    await page.waitForURL(/\/console\/dead-letters$/);
    await page.getByRole("button", { name: "Count matches for a bulk redrive" }).click();
    await page.waitForURL(/matched=1/);
    expect(await page.locator(".notice").textContent()).toContain("1 dead letter matches this filter");
    expect(await page.getByRole("button", { name: "Redrive all 1" }).count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, "dead-letters.png"), fullPage: true });
    a11y.push(...(await accessibilityProblems(page)));
    await page.getByRole("link", { name: broken.id }).click();
    await page.waitForURL(new RegExp(`/console/notifications/${broken.id}$`));

    // The cause is fixed; Redrive (a POST with the page's CSRF token, after a confirm).
    ledgerUp = true;
    await redriveUntilCompleted(page);
    expect(await page.locator("ol.timeline").textContent()).toContain("completed");
    await page.screenshot({ path: join(SHOTS, "notification-completed.png"), fullPage: true });
    a11y.push(...(await accessibilityProblems(page)));

    await page.getByRole("link", { name: "SUB-LEDGER" }).first().click();
    await page.waitForURL(/\/console\/subscriptions\//);
    expect(await page.locator("h1").textContent()).toContain("M100200300:SUB-LEDGER");
    await page.screenshot({ path: join(SHOTS, "subscription.png"), fullPage: true });
    a11y.push(...(await accessibilityProblems(page)));

    expect(browser.problems).toEqual([]);
    // A page of its own for what is not there (a 404, which the browser logs): the same landmarks and colours.
    const missing = await page.goto(`${origin}/console/notifications/WH-not-there`);
    expect(missing?.status()).toBe(404);
    a11y.push(...(await accessibilityProblems(page)));
    expect(a11y).toEqual([]);
  }, 120_000);
});
