import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { hmacVerifier, memoryStore } from "merchant-webhooks";
import { createWorker } from "merchant-webhooks/bullmq";
import { CONSOLE_CSP, consoleHandler } from "merchant-webhooks/console";
import { signHmac } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { leakyNotification, SECRETS } from "../support/card-data.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { consoleRig } from "./rig.js";

const BASE = "http://console.test/console";
const LOGIN = `Basic ${Buffer.from("ops:pw-console-5521").toString("base64")}`;
const WEBHOOK_SECRET = "whsec-console-never-shown-8812";
const SENDER_TOKEN = "Bearer sender-token-never-shown-4410";
const ENCRYPTION_KEY = randomBytes(32);
const MARKUP = `<img src=x onerror=alert(1)>"'&`;
const hmac = { secret: WEBHOOK_SECRET, header: "x-signature" };

/** Everything the console must never serve, in any page or JSON answer. */
const NEVER = [
  ...SECRETS,
  WEBHOOK_SECRET,
  SENDER_TOKEN,
  "pw-console-5521",
  LOGIN,
  ENCRYPTION_KEY.toString("base64"),
  ENCRYPTION_KEY.toString("hex"),
  "cvc-never-5150",
  "4111 1111 1111 1111",
];

describe("the console's security", () => {
  const prefix = uniquePrefix("console-security");
  const redis = new Redis(REDIS_URL);
  const store = memoryStore();
  const { recordings, receiver, admin } = consoleRig(
    store,
    { name: "sec", prefix, encryptionKey: ENCRYPTION_KEY },
    { verify: hmacVerifier(hmac), ordering: false },
  );
  const worker = createWorker({
    connection: REDIS_URL,
    name: "sec",
    prefix,
    idempotency: store,
    encryptionKey: ENCRYPTION_KEY,
    logger: silentLogger(),
    // A handler whose error quotes the payload: the console must not pass it on.
    onRenew: async (n) => {
      throw new Error(`charge failed: card 4111 1111 1111 1111 cvc cvc-never-5150 for ${n.id}`);
    },
    onUnknown: async () => {},
  });
  const handler = consoleHandler({ admin, authorize: (request) => request.headers.get("authorization") === LOGIN });
  const leaky = leakyNotification();
  const marked = notification("SUBSCRIPTION_RENEW", `mk-${Date.now()}-${MARKUP}`);
  marked.event_type = `<script>alert(2)</script>`;
  marked.resource.id = `<b>SUB</b>${MARKUP}`;
  leaky.resource.renewal_event.payment_detail.card_info.cvc = "cvc-never-5150";

  const get = (path: string, headers: Record<string, string> = { authorization: LOGIN }) =>
    handler(new Request(`${BASE}${path}`, { headers }));

  /** Every page and JSON answer the console has, for the notifications sent. */
  const routes = () => [
    "/",
    "/notifications",
    "/notifications?state=failed",
    `/notifications/${encodeURIComponent(leaky.id)}`,
    `/notifications/${encodeURIComponent(marked.id)}`,
    `/subscriptions/${encodeURIComponent(leaky.resource.id)}`,
    `/subscriptions/${encodeURIComponent(marked.resource.id)}`,
    "/dead-letters",
    "/dead-letters?matched=1",
    "/api/overview",
    "/api/notifications",
    `/api/notifications/${encodeURIComponent(leaky.id)}`,
    `/api/notifications/${encodeURIComponent(marked.id)}`,
    "/assets/console.js",
    "/assets/console.css",
  ];

  beforeAll(async () => {
    for (const body of [leaky, marked]) {
      const raw = json(body);
      const headers = {
        "content-type": "application/json",
        authorization: SENDER_TOKEN,
        ...(await signHmac(raw, hmac)),
      };
      expect((await receiver.handle({ method: "POST", headers, rawBody: raw })).status).toBe(200);
    }
    await eventually(async () => (await store.get(leaky.id))?.state === "failed", 20_000, "the leaky one to fail");
    await eventually(async () => (await store.get(marked.id))?.state === "completed", 20_000, "the marked one to run");
    await eventually(() => recordings.size === 2);
  }, 40_000);

  afterAll(async () => {
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("answers 401 on every route, GET and POST, without authorization", async () => {
    const posts = ["/actions/redrive", "/actions/replay", "/actions/discard"];
    for (const path of [...routes(), ...posts]) {
      for (const method of ["GET", "POST"]) {
        for (const headers of [{}, { authorization: "Basic b3BzOndyb25n" }] as Array<Record<string, string>>) {
          const response = await handler(new Request(`${BASE}${path}`, { method, headers }));
          expect(response.status, `${method} ${path}`).toBe(401);
          expect(await response.text()).toBe("unauthorized");
        }
      }
    }
    // An authorize that throws refuses too.
    const throwing = consoleHandler({
      admin,
      authorize: () => {
        throw new Error("session store down");
      },
    });
    expect((await throwing(new Request(`${BASE}/`, { headers: { authorization: LOGIN } }))).status).toBe(401);
    expect(() => consoleHandler({ admin } as never)).toThrow(/authorize/);
  });

  it("serves no card data, secret or authorization value in any page or JSON", async () => {
    let served = "";
    for (const path of routes()) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      served += await response.text();
    }
    expect(served).toContain(leaky.id);
    for (const secret of NEVER) expect(served, `served ${secret}`).not.toContain(secret);
    // The job's notification is sealed: shown as sealed, never opened.
    const page = await (await get(`/notifications/${encodeURIComponent(leaky.id)}`)).text();
    expect(page).toContain("<strong>sealed</strong>");
    const detail = await (await get(`/api/notifications/${encodeURIComponent(leaky.id)}`)).json();
    expect(detail.job).toMatchObject({ sealed: true });
    expect(detail.job.notification).toBeUndefined();
  });

  it("escapes markup in ids and fields", async () => {
    for (const path of routes().filter((p) => !p.startsWith("/api") && !p.startsWith("/assets"))) {
      const page = await (await get(path)).text();
      expect(page, path).not.toContain("<img src=x");
      expect(page, path).not.toContain("<script>alert");
      expect(page, path).not.toContain("<b>SUB</b>");
    }
    const page = await (await get(`/notifications/${encodeURIComponent(marked.id)}`)).text();
    expect(page).toContain("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;");
    expect(page).toContain("&lt;script&gt;alert(2)&lt;/script&gt;");
    // The only scripts are the console's own file: the policy allows no inline script.
    expect(page.match(/<script\b[^>]*>/g)).toEqual([`<script src="/console/assets/console.js" defer>`]);
  });

  it("sends a strict Content-Security-Policy on every page", async () => {
    for (const path of routes()) {
      const response = await get(path);
      expect(response.headers.get("content-security-policy"), path).toBe(CONSOLE_CSP);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain("unsafe");
  });

  it("refuses a POST without the page's CSRF token", async () => {
    const page = await get(`/notifications/${encodeURIComponent(leaky.id)}`);
    const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
    const token = decodeURIComponent(cookie.split("=").slice(1).join("="));
    expect(await page.text()).toContain(`name="csrf" value="${token}"`);
    const post = (body: Record<string, string>, headers: Record<string, string>) =>
      handler(
        new Request(`${BASE}/actions/discard`, {
          method: "POST",
          headers: { authorization: LOGIN, "content-type": "application/x-www-form-urlencoded", ...headers },
          body: new URLSearchParams(body).toString(),
        }),
      );
    const form = { id: leaky.id, reason: "test" };
    // No token, no cookie; a token but no cookie; a cookie but no token; a forged pair.
    expect((await post(form, {})).status).toBe(403);
    expect((await post({ ...form, csrf: token }, {})).status).toBe(403);
    expect((await post(form, { cookie })).status).toBe(403);
    expect((await post({ ...form, csrf: "abc.def" }, { cookie: "mw_console_csrf=abc.def" })).status).toBe(403);
    expect((await store.get(leaky.id))?.state).toBe("failed");
    // The page's own pair is accepted.
    const accepted = await post({ ...form, csrf: token }, { cookie });
    expect(accepted.status).toBe(303);
    expect((await store.get(leaky.id))?.state).toBe("completed");
  });

  it("read-only hides every action and refuses every POST", async () => {
    const readOnly = consoleHandler({ admin, authorize: () => true, readOnly: true });
    for (const path of routes()) {
      const response = await readOnly(new Request(`${BASE}${path}`));
      const text = await response.text();
      expect(text, path).not.toContain('method="post"');
      expect(response.headers.get("set-cookie")).toBeNull();
    }
    for (const path of ["/actions/redrive", "/actions/replay", "/actions/discard"]) {
      const response = await readOnly(new Request(`${BASE}${path}`, { method: "POST" }));
      expect(response.status).toBe(403);
    }
  });
});
