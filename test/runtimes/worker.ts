// The app the runtime tests serve on Bun, Deno and workerd, bundled by esbuild from the sources: the
// fetch adapter and the Hono middleware, each without a verifier, with hmacVerifier and with
// standardWebhooksVerifier (Web Crypto), over one recording of handler calls that the test reads.
import { Hono } from "hono";
import { subscriptionWebhook as fetchWebhook, type SubscriptionWebhookOptions } from "merchant-webhooks/fetch";
import { subscriptionWebhook as honoWebhook } from "merchant-webhooks/hono";
// The root entry also gathers Node-only parts (the JSONL recorder's fs): the store and verifiers come
// from their own modules, as the fetch adapter's bundle takes them.
import { memoryStore } from "../../src/idempotency/memory-store.js";
import { type IdempotencyStore, StoreUnavailableError } from "../../src/idempotency/store.js";
import { hmacVerifier, standardWebhooksVerifier } from "../../src/verify/index.js";
import { RUNTIME_HMAC, RUNTIME_LIMITS, RUNTIME_STANDARD_SECRET } from "./settings.js";

/** Handler calls by notification id, read by the test at GET /calls?id=. */
const calls = new Map<string, number>();
/** Ids whose handler waits until POST /release?id= (the 409 row). */
const held = new Map<string, () => void>();

const record = (id: string) => calls.set(id, (calls.get(id) ?? 0) + 1);

/** A memory store that is down for ids starting "store-down" (the 503 row). */
function storeDownFor(prefix: string): IdempotencyStore {
  const store = memoryStore();
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== "claim" || typeof value !== "function") return value;
      return (request: { id: string }, ...rest: unknown[]) =>
        request.id.startsWith(prefix)
          ? Promise.reject(new StoreUnavailableError("store down for this test"))
          : value.call(target, request, ...rest);
    },
  });
}

function options(verify: SubscriptionWebhookOptions["verify"]): SubscriptionWebhookOptions {
  return {
    ...RUNTIME_LIMITS,
    ...(verify ? { verify } : {}),
    idempotency: storeDownFor("store-down"),
    onCreated: (n) => void record(n.id),
    onRenew: (n) => {
      record(n.id);
      if (n.id.startsWith("hold")) return new Promise<void>((resolve) => held.set(n.id, resolve));
      if (n.id.startsWith("fail-once") && calls.get(n.id) === 1) throw new Error("db password is hunter2");
      if (n.id.startsWith("too-slow")) return new Promise<void>(() => {});
    },
    onCancel: (n) => void record(n.id),
    onSuspend: (n) => void record(n.id),
    onUnknown: (n) => void record(n.id),
  };
}

const verifiers = {
  plain: undefined,
  hmac: hmacVerifier(RUNTIME_HMAC),
  standard: standardWebhooksVerifier(RUNTIME_STANDARD_SECRET),
};

// The fetch adapter is called with the runtime's own Request, no router in between; Hono's routes
// mount the middleware as an app would. Made on the first request, not at module scope: workerd
// refuses timers and random values in a module's global scope, and a receiver starts both.
const fetchHandlers = new Map<string, (request: Request) => Promise<Response>>();
const app = new Hono();
let mounted = false;
function mountWebhooks(): void {
  mounted = true;
  for (const [mode, verify] of Object.entries(verifiers)) {
    fetchHandlers.set(`/fetch/${mode}`, fetchWebhook(options(verify)));
    app.all(`/hono/${mode}`, honoWebhook(options(verify)));
  }
}
app.get("/calls", (c) => c.json({ calls: calls.get(c.req.query("id") ?? "") ?? 0 }));
app.post("/release", (c) => {
  held.get(c.req.query("id") ?? "")?.();
  return c.body(null, 204);
});
app.get("/runtime", (c) =>
  c.json({
    bun: typeof (globalThis as { Bun?: unknown }).Bun !== "undefined",
    deno: typeof (globalThis as { Deno?: unknown }).Deno !== "undefined",
    workerd: typeof (globalThis as { WebSocketPair?: unknown }).WebSocketPair !== "undefined" && !("Bun" in globalThis),
  }),
);

export default {
  fetch(request: Request): Response | Promise<Response> {
    if (!mounted) mountWebhooks();
    return fetchHandlers.get(new URL(request.url).pathname)?.(request) ?? app.fetch(request);
  },
};
