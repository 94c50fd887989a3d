import { Redis } from "ioredis";
import { memoryStore } from "merchant-webhooks";
import { consoleHandler } from "merchant-webhooks/console";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { consoleRig } from "./rig.js";

// The console's CSRF tokens are bound to the principal `authorize` returns (or the credentials the
// request carries), to the console and to an expiry; a POST from another origin is refused outright.

const BASE = "http://console.test/console";
const SESSIONS = new Map<string, string>([
  ["s-alice", "alice"],
  ["s-bob", "bob"],
]);

describe("the console's CSRF tokens", () => {
  const prefix = uniquePrefix("console-csrf");
  const redis = new Redis(REDIS_URL);
  const { admin, receiver } = consoleRig(memoryStore(), { name: "csrf", prefix });
  /** A merchant's session check: the session cookie names the user, and the user is the principal. */
  const bySession = consoleHandler({
    admin,
    csrfSecret: "csrf-test-secret",
    authorize: (request) => {
      const session = /(?:^|;\s*)session=([^;]+)/.exec(request.headers.get("cookie") ?? "")?.[1];
      return (session !== undefined && SESSIONS.get(session)) || false;
    },
  });
  /** `true`: the tokens are bound to the request's credentials. */
  const byCredentials = consoleHandler({
    admin,
    csrfSecret: "csrf-test-secret",
    authorize: (request) => (request.headers.get("authorization") ?? "").startsWith("Basic "),
  });
  afterEach(() => vi.useRealTimers());
  afterAll(async () => {
    await receiver.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  /** The token a page served to `headers` carries, and the Set-Cookie it came with. */
  async function tokenFor(handler: typeof bySession, headers: Record<string, string>, base = BASE) {
    const page = await handler(new Request(`${base}/dead-letters`, { headers }));
    expect(page.status).toBe(200);
    const setCookie = page.headers.get("set-cookie")!;
    const token = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    expect(setCookie).toContain(token);
    return { token, setCookie, cookie: setCookie.split(";")[0]! };
  }

  const post = (handler: typeof bySession, csrf: string, headers: Record<string, string>, base = BASE) =>
    handler(
      new Request(`${base}/actions/redrive`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ csrf, mode: "ids" }).toString(),
      }),
    );

  it("accepts the console's own form, posted back by the same user", async () => {
    const alice = { cookie: "session=s-alice" };
    const { token, cookie } = await tokenFor(bySession, alice);
    const answer = await post(bySession, token, {
      cookie: `session=s-alice; ${cookie}`,
      origin: "http://console.test",
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe("/console/dead-letters?done=nothing-selected");
  });

  it("refuses a token replayed by another user, with the victim's own cookie or the planted one", async () => {
    const { token, cookie } = await tokenFor(bySession, { cookie: "session=s-alice" });
    expect((await post(bySession, token, { cookie: `session=s-bob; ${cookie}` })).status).toBe(403);
  });

  it("refuses the token of a user who has since logged out, once logged in again", async () => {
    const { token, cookie } = await tokenFor(byCredentials, { authorization: "Basic b2xkOnNlc3Npb24=" });
    // The same browser, new credentials: the old token is no longer good.
    const answer = await post(byCredentials, token, { authorization: "Basic bmV3OnNlc3Npb24=", cookie });
    expect(answer.status).toBe(403);
    SESSIONS.set("s-carol-1", "carol-session-1");
    const carol = await tokenFor(bySession, { cookie: "session=s-carol-1" });
    SESSIONS.delete("s-carol-1");
    SESSIONS.set("s-carol-2", "carol-session-2");
    expect((await post(bySession, carol.token, { cookie: `session=s-carol-2; ${carol.cookie}` })).status).toBe(403);
  });

  it("refuses a POST from a sibling origin or another site, token and all", async () => {
    const alice = { cookie: "session=s-alice" };
    const { token, cookie } = await tokenFor(bySession, alice);
    const headers = { cookie: `session=s-alice; ${cookie}` };
    const foreigns: Array<Record<string, string>> = [
      { origin: "http://evil.console.test" },
      { origin: "null", "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site" },
      { origin: "http://console.test", "sec-fetch-site": "same-site" },
    ];
    for (const foreign of foreigns)
      expect((await post(bySession, token, { ...headers, ...foreign })).status, JSON.stringify(foreign)).toBe(403);
    expect((await post(bySession, token, { ...headers, "sec-fetch-site": "same-origin" })).status).toBe(303);
    // What Chromium sends for the console's own form (its pages say Referrer-Policy: no-referrer).
    const own = { ...headers, origin: "null", "sec-fetch-site": "same-origin" };
    expect((await post(bySession, token, own)).status).toBe(303);
  });

  it("parses tokens strictly: a suffix, an old-style pair or a forged MAC is refused", async () => {
    const { token } = await tokenFor(bySession, { cookie: "session=s-alice" });
    const tampered = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    for (const sent of [`${token}.anything`, `${token}x`, "abc.def", tampered, ` ${token}`]) {
      const answer = await post(bySession, sent, { cookie: `session=s-alice; mw_console_csrf=${sent}` });
      expect(answer.status, sent).toBe(403);
    }
  });

  it("refuses an expired token and serves a fresh one in its place", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { token, cookie } = await tokenFor(bySession, { cookie: "session=s-alice" });
    vi.setSystemTime(Date.now() + 13 * 60 * 60 * 1000);
    expect((await post(bySession, token, { cookie: `session=s-alice; ${cookie}` })).status).toBe(403);
    const again = await tokenFor(bySession, { cookie: `session=s-alice; ${cookie}` });
    expect(again.token).not.toBe(token);
  });

  it("binds the token to the console: another console with the same secret refuses it", async () => {
    const other = consoleHandler({
      admin,
      basePath: "/other",
      csrfSecret: "csrf-test-secret",
      authorize: () => "alice",
    });
    const { token } = await tokenFor(bySession, { cookie: "session=s-alice" });
    const answer = await post(other, token, { cookie: `mw_console_csrf=${token}` }, "http://console.test/other");
    expect(answer.status).toBe(403);
  });

  it("uses a __Host- cookie, Secure and Path=/, when served over HTTPS; only that cookie is read", async () => {
    const https = "https://console.test/console";
    const { token, setCookie, cookie } = await tokenFor(bySession, { cookie: "session=s-alice" }, https);
    expect(setCookie).toMatch(/^__Host-mw_console_csrf=[^;]+; Path=\/; Secure; HttpOnly; SameSite=Strict/);
    expect((await post(bySession, token, { cookie: `session=s-alice; ${cookie}` }, https)).status).toBe(303);
    // A cookie without the prefix, as a sibling subdomain can set one, is not read over HTTPS.
    const planted = `session=s-alice; mw_console_csrf=${token}`;
    expect((await post(bySession, token, { cookie: planted }, https)).status).toBe(403);
    const plain = await tokenFor(bySession, { cookie: "session=s-alice" });
    expect(plain.setCookie).not.toContain("Secure");
    expect(plain.setCookie).toContain("Path=/console");
  });
});

describe("the console's notices", () => {
  const prefix = uniquePrefix("console-notice");
  const redis = new Redis(REDIS_URL);
  const { admin, receiver } = consoleRig(memoryStore(), { name: "notice", prefix });
  const handler = consoleHandler({ admin, authorize: () => true });
  afterAll(async () => {
    await receiver.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });
  const page = async (search: string) => (await handler(new Request(`${BASE}/dead-letters${search}`))).text();

  it("shows only the console's own messages, never text from the link", async () => {
    const forged = await page(`?done=${encodeURIComponent("Your session expired: call +1 555 0100")}`);
    expect(forged).not.toContain("session expired");
    expect(forged).not.toContain('class="notice');
    const own = await page("?done=redriven&n=2&of=3");
    expect(own).toContain("redriven 2 of 3; 1 skipped");
    const counts = await page("?done=redriven&n=<b>&of=1e9");
    expect(counts).toContain("redriven 0 of 0");
    expect(await page("?done=__proto__")).not.toContain('class="notice');
  });
});
