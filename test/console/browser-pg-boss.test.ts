import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { createReceiver } from "merchant-webhooks";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import { serveConsole } from "merchant-webhooks/node";
import { createPgBossWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted, notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { accessibilityProblems, CHROMIUM, consoleBrowser, redriveUntilCompleted } from "./chromium.js";

const USER = { username: "ops", password: "console-pgboss-pw" };

describe("the console in a real browser on PostgreSQL with pg-boss", () => {
  const bed = pgBossBed("pgbbrowser", () => "");
  let ledgerUp = false;
  const broken = notification("SUBSCRIPTION_RENEW", `WH-pgboss-ledger-down-${process.pid}`);
  broken.resource.id = "SUB-PGLEDGER";
  const others = ["SUBSCRIPTION_CREATED", "SUBSCRIPTION_CANCELLED"].map((type, i) => {
    const body = notification(type, `WH-pgboss-${process.pid}-${i}`);
    body.resource.id = `SUB-PG-${i}`;
    return body;
  });
  const authorization = `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString("base64")}`;
  let origin: string;
  let stop = async () => {};
  let browser: Awaited<ReturnType<typeof consoleBrowser>>;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium package`).toBe(true);
    browser = await consoleBrowser(USER);
    // As a new user sets it up: postgresStore, pgBossQueue, ordering, no recorder.
    const queue = pgBossQueue({
      boss: bed.boss,
      name: "browser",
      schema: bed.bossSchema,
      jobOptions: { retryLimit: 0 },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: bed.store, queue, ordering: true });
    const handler = async (n: { id: string }) => {
      if (n.id === broken.id && !ledgerUp) throw new Error("ledger unavailable");
    };
    const worker = createPgBossWorker({
      boss: bed.boss,
      name: "browser",
      schema: bed.bossSchema,
      idempotency: bed.store,
      logger: silentLogger(),
      pollingIntervalMs: 100,
      onRenew: handler,
      onCreated: handler,
      onCancel: handler,
    });
    const server = createServer(
      serveConsole(
        consoleHandler({
          admin: createAdmin({ idempotency: bed.store, queue }),
          authorize: (request) =>
            request.headers.get("authorization") === authorization ||
            new Response("log in", { status: 401, headers: { "www-authenticate": 'Basic realm="console"' } }),
        }),
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    stop = async () => {
      await new Promise((resolve) => server.close(resolve));
      await worker.close({ timeoutMs: 2_000 });
      await receiver.close();
    };
    for (const body of [...others, broken]) await deliverUntilAccepted(receiver, body, 50);
    await eventually(
      async () => (await bed.store.get(broken.id))?.state === "failed",
      20_000,
      "the broken one to fail",
    );
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stop();
  });

  it("finds a failed notification, redrives it, sees it complete with the failure still in its timeline", async () => {
    const page = await browser.openPage();
    // Every screen of the pg-boss console against WCAG 2.1 AA too (its own queue and lane markup).
    const a11y: string[] = [];
    await page.goto(`${origin}/console/`);
    await expect.poll(() => page.locator("h1").textContent()).toBe("Overview");
    const overview = await page.locator("main").textContent();
    expect(overview).toContain("Queue (pg-boss)");
    expect(overview).not.toContain("(unknown)");
    a11y.push(...(await accessibilityProblems(page)));

    // Found through the list, filtered by state and by event type.
    await page.getByRole("link", { name: "All", exact: true }).click();
    await page.waitForURL(/\/console\/notifications$/);
    await page.locator("select[name=state]").selectOption("failed");
    await page.locator("input[name=eventType]").fill("SUBSCRIPTION_RENEW");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/state=failed/);
    expect(await page.locator("tbody tr").count()).toBe(1);
    const row = page.locator("tr", { has: page.getByRole("link", { name: broken.id }) });
    expect(await row.textContent()).toContain("SUB-PGLEDGER");
    a11y.push(...(await accessibilityProblems(page)));

    await page.getByRole("link", { name: broken.id }).click();
    await page.waitForURL(new RegExp(`/console/notifications/${broken.id}$`));
    expect(await page.locator("table .state").first().textContent()).toBe("failed");
    const failedPage = await page.locator("main").textContent();
    expect(failedPage).toContain("SUBSCRIPTION_RENEW");
    expect(failedPage).not.toContain("No job.");
    expect(await page.getByRole("button", { name: "Replay from recording" }).count()).toBe(0);
    a11y.push(...(await accessibilityProblems(page)));

    // The cause is fixed; Redrive.
    ledgerUp = true;
    await redriveUntilCompleted(page);
    const timeline = page.locator("ol.timeline li");
    const steps = await timeline.allTextContents();
    const failedAt = steps.findIndex((step) => step.startsWith("failed") && step.includes("(then redriven)"));
    const completedAt = steps.findIndex((step) => step.startsWith("completed"));
    expect(failedAt).toBeGreaterThanOrEqual(0);
    expect(completedAt).toBeGreaterThan(failedAt);
    a11y.push(...(await accessibilityProblems(page)));
    expect(browser.problems).toEqual([]);
    expect(a11y).toEqual([]);
  }, 90_000);
});
