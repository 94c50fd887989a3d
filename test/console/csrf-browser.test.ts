import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { memoryStore } from "merchant-webhooks";
import { type Admin, consoleHandler } from "merchant-webhooks/console";
import { serveConsole } from "merchant-webhooks/node";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { consoleRig } from "./rig.js";

/** Debian's chromium package, as in browser.test.ts. */
const CHROMIUM = "/usr/bin/chromium";

// The review's attack, in Chromium: a user (alice) who has the console's token plants it, cookie and
// form, from a sibling subdomain into another user's (bob's) browser, and makes it post a discard.

describe("the console's CSRF defence in a real browser", () => {
  const prefix = uniquePrefix("console-csrf-browser");
  const redis = new Redis(REDIS_URL);
  const rig = consoleRig(memoryStore(), { name: "csrf-browser", prefix });
  const discards: string[] = [];
  /** The admin, counting the discards that reach it: none may. */
  const admin: Admin = new Proxy(rig.admin, {
    get(target, prop, receiver) {
      if (prop === "discard")
        return (id: string, options: { reason: string }) => {
          discards.push(id);
          return target.discard(id, options);
        };
      return Reflect.get(target, prop, receiver);
    },
  });
  const sessions = new Map([
    ["s-alice", "alice"],
    ["s-bob", "bob"],
  ]);
  const consoleRoute = serveConsole(
    consoleHandler({
      admin,
      authorize: (request) => {
        const session = /(?:^|;\s*)session=([^;]+)/.exec(request.headers.get("cookie") ?? "")?.[1];
        return (session !== undefined && sessions.get(session)) || false;
      },
    }),
  );
  let attackPage = "";
  const server = createServer((req, res) => {
    if ((req.headers.host ?? "").startsWith("evil.")) {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(attackPage);
      return;
    }
    void consoleRoute(req, res);
  });
  const userDataDir = mkdtempSync(join(tmpdir(), "mw-console-csrf-chromium-"));
  let context: BrowserContext;
  let port = 0;

  beforeAll(async () => {
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium package`).toBe(true);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // Two sites under one registrable domain, both served here: ops.console.test and evil.console.test.
        "--host-resolver-rules=MAP *.console.test 127.0.0.1",
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    rmSync(userDataDir, { recursive: true, force: true });
    await new Promise((resolve) => server.close(resolve));
    await rig.receiver.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("refuses a discard posted from a sibling subdomain with a planted token of another user", async () => {
    const consoleOrigin = `http://ops.console.test:${port}`;
    // Alice's token, as alice's own browser got it from the console.
    const alicePage = await fetch(`http://127.0.0.1:${port}/console/dead-letters`, {
      headers: { cookie: "session=s-alice", host: `ops.console.test:${port}` },
    });
    expect(alicePage.status).toBe(200);
    const token = /name="csrf" value="([^"]+)"/.exec(await alicePage.text())![1]!;
    attackPage = `<!doctype html><body>
<form id="f" method="post" action="${consoleOrigin}/console/actions/discard">
<input name="csrf" value="${token}"><input name="id" value="WH-victim-1"><input name="reason" value="planted">
</form>
<script>
document.cookie = "mw_console_csrf=${token}; domain=console.test; path=/console";
document.getElementById("f").submit();
</script></body>`;
    // Bob is logged in to the console; his browser opens the attacker's page.
    await context.addCookies([{ name: "session", value: "s-bob", domain: "ops.console.test", path: "/" }]);
    const page = await context.newPage();
    const answered = page.waitForResponse((response) => response.url().endsWith("/console/actions/discard"));
    await page.goto(`http://evil.console.test:${port}/attack`);
    const answer = await answered;
    expect(answer.status()).toBe(403);
    expect(await answer.text()).toContain("not posted from the console's own pages");
    expect(discards).toEqual([]);
    // The planted cookie did reach the console with the post: only the checks stopped it.
    const cookies = await context.cookies(`${consoleOrigin}/console/actions/discard`);
    expect(cookies.find((cookie) => cookie.name === "mw_console_csrf")?.value).toBe(token);
  }, 60_000);
});
