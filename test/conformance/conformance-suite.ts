import {
  type HmacVerifierOptions,
  hmacVerifier,
  type IdempotencyStore,
  type ReceiverOptions,
  StoreUnavailableError,
  type SubscriptionHandlers,
  standardWebhooksVerifier,
  type VerifyHook,
} from "merchant-webhooks";
import { signHmac, signStandardWebhook } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import type { Received, Send } from "./clients.js";

/** An adapter under test, mounted with `options` at one webhook URL. */
export interface Mounted {
  send: Send;
  close(): Promise<void>;
}
export type Mount = (options: ReceiverOptions) => Promise<Mounted>;

/** How a delivery is signed, and the verifier that checks it. */
interface SigningMode {
  name: string;
  verify?: VerifyHook;
  sign(body: Uint8Array): Promise<Record<string, string>>;
}

const HMAC: HmacVerifierOptions = {
  secret: ["current-merchant-secret", "previous-merchant-secret"],
  header: "x-platform-signature",
  prefix: "sha256=",
  timestamp: { header: "x-platform-timestamp" },
};
const STANDARD_SECRET = `whsec_${Buffer.from("conformance suite secret, 32 bytes").toString("base64")}`;

const MODES: SigningMode[] = [
  { name: "without a verifier", sign: async () => ({}) },
  { name: "with hmacVerifier", verify: hmacVerifier(HMAC), sign: (body) => signHmac(body, HMAC) },
  {
    name: "with standardWebhooksVerifier",
    verify: standardWebhooksVerifier(STANDARD_SECRET),
    sign: (body) => signStandardWebhook(body, STANDARD_SECRET),
  },
];

const EVENTS = [
  ["SUBSCRIPTION_CREATED", "onCreated"],
  ["SUBSCRIPTION_RENEW", "onRenew"],
  ["SUBSCRIPTION_CANCELLED", "onCancel"],
  ["SUBSCRIPTION_SUSPENDED", "onSuspend"],
  ["SUBSCRIPTION_RESUMED", "onResume"],
  ["UNKNOWN", "onUnknown"],
  ["SUBSCRIPTION_PAUSED_IN_A_FUTURE_VERSION", "onUnknown"],
] as const;

const JSON_TYPE = "application/json";
/** A body limit a notification (about 2 KB) fits under. */
const LIMIT = 2_500;
const encode = (text: string) => new TextEncoder().encode(text);
const bytesOf = (body: unknown) => (body instanceof Uint8Array ? body : encode(JSON.stringify(body)));

/** Every handler, each a spy. */
function allHandlers() {
  return {
    onCreated: vi.fn(),
    onRenew: vi.fn(),
    onCancel: vi.fn(),
    onSuspend: vi.fn(),
    onResume: vi.fn(),
    onUnknown: vi.fn(),
  } satisfies Required<SubscriptionHandlers>;
}

/**
 * The behaviour every adapter must show identically: the status table, dispatch, duplicates, redaction,
 * the body limit (declared and streamed) and bad input; then all of it again with each signing verifier
 * configured and every delivery signed.
 */
/** What an adapter's platform does before the adapter runs. */
export interface Platform {
  /**
   * The platform receives the whole body before invoking the adapter (AWS Lambda): a body that never
   * finishes arriving never reaches it, so the body time-out case does not apply.
   */
  buffersBody?: boolean;
}

export function runConformance(adapterName: string, mount: Mount, platform: Platform = {}): void {
  describe(`${adapterName} conformance`, () => {
    for (const mode of MODES) describe(mode.name, () => defineCases(mount, mode, platform));
  });
}

function defineCases(mount: Mount, mode: SigningMode, platform: Platform): void {
  const mounted: Mounted[] = [];
  afterEach(async () => {
    await Promise.all(mounted.splice(0).map((app) => app.close()));
  });

  async function receiver(options: Partial<ReceiverOptions> = {}) {
    const app = await mount({ logger: silentLogger(), ...(mode.verify ? { verify: mode.verify } : {}), ...options });
    mounted.push(app);
    return app;
  }

  interface PostOptions {
    /** `null` sends no content-type at all. */
    contentType?: string | null;
    headers?: Record<string, string>;
    streamed?: boolean;
    neverEnds?: boolean;
    /** Sign these bytes instead of the body sent (a tampered delivery). */
    signed?: Uint8Array;
    unsigned?: boolean;
  }

  async function post(app: Mounted, body: unknown, options: PostOptions = {}): Promise<Received> {
    const bytes = bytesOf(body);
    const contentType = options.contentType === undefined ? JSON_TYPE : options.contentType;
    const signature = options.unsigned ? {} : await mode.sign(options.signed ?? bytes);
    const headers = {
      ...(contentType === null ? {} : { "content-type": contentType }),
      ...signature,
      ...options.headers,
    };
    return app.send({ method: "POST", headers, body: bytes, streamed: options.streamed, neverEnds: options.neverEnds });
  }

  const expectAnswer = (
    response: Received,
    status: number,
    answer: { processed: boolean; message: string | RegExp },
  ) => {
    expect(response.status).toBe(status);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.body).toEqual({ processed: answer.processed, message: expect.stringMatching(answer.message) });
  };

  describe("dispatch", () => {
    it.each(EVENTS)("%s goes to %s once, and to no other handler", async (eventType, key) => {
      const handlers = allHandlers();
      const app = await receiver(handlers);
      const body = notification(eventType);
      expectAnswer(await post(app, body), 200, { processed: true, message: /^processed$/ });
      for (const [name, handler] of Object.entries(handlers))
        expect(handler, name).toHaveBeenCalledTimes(name === key ? 1 : 0);
      expect(handlers[key].mock.calls[0]![0]).toMatchObject({ id: body.id, event_type: eventType });
    });

    it("gives the handler the request headers with lower-case names", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew });
      await post(app, notification(), { headers: { "X-Delivery-Attempt": "3" } });
      expect(onRenew.mock.calls[0]![1].headers["x-delivery-attempt"]).toBe("3");
    });

    it("200 processed when no handler is registered for the event type", async () => {
      const app = await receiver({ onRenew: vi.fn() });
      expectAnswer(await post(app, notification("SUBSCRIPTION_SUSPENDED")), 200, {
        processed: true,
        message: /^no handler for this event type/,
      });
    });

    it.each([
      ["no content-type", null],
      ["a charset", "application/json; charset=utf-8"],
      ["a +json type", "application/vnd.platform+json"],
    ])("accepts a notification sent with %s", async (_case, contentType) => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew });
      expect((await post(app, notification(), { contentType })).status).toBe(200);
      expect(onRenew).toHaveBeenCalledTimes(1);
    });

    it("reads a body sent in chunks with no Content-Length", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew });
      expectAnswer(await post(app, notification(), { streamed: true }), 200, {
        processed: true,
        message: /^processed$/,
      });
      expect(onRenew).toHaveBeenCalledTimes(1);
    });
  });

  describe("duplicates", () => {
    it("200 'already processed' for a redelivery, without calling the handler again", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew });
      const body = bytesOf(notification());
      expect((await post(app, body)).status).toBe(200);
      expectAnswer(await post(app, body), 200, { processed: true, message: /^already processed$/ });
      expect(onRenew).toHaveBeenCalledTimes(1);
    });

    it("409 with Retry-After while the same id is still being processed", async () => {
      let release!: () => void;
      const onRenew = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
      const app = await receiver({ onRenew });
      const body = bytesOf(notification());
      const first = post(app, body);
      await vi.waitFor(() => expect(onRenew).toHaveBeenCalled());
      const second = await post(app, body);
      expectAnswer(second, 409, { processed: false, message: /being processed/ });
      expect(Number(second.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      release();
      expect((await first).status).toBe(200);
      expect(onRenew).toHaveBeenCalledTimes(1);
    });

    it("422 for a completed id redelivered with a different payload", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew });
      const body = notification();
      await post(app, body);
      const changed = { ...body, summary: "something else" };
      expectAnswer(await post(app, changed), 422, { processed: false, message: /different payload/ });
      expect(onRenew).toHaveBeenCalledTimes(1);
    });
  });

  describe("bad input", () => {
    it.each([
      ["not JSON", encode("{not json"), "body is not valid JSON"],
      ["empty", new Uint8Array(0), "body is not valid JSON"],
      ["a JSON array", encode("[1,2]"), "body must be a JSON object"],
      ["a JSON string", encode('"hello"'), "body must be a JSON object"],
      ["not UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), "body is not valid UTF-8"],
    ])("400 when the body is %s, without calling a handler", async (_case, body, message) => {
      const handlers = allHandlers();
      const app = await receiver(handlers);
      const response = await post(app, body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ processed: false, message });
      for (const handler of Object.values(handlers)) expect(handler).not.toHaveBeenCalled();
    });

    it("400 naming the failing field paths, never the values", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew });
      const bad = notification();
      delete bad.resource.execution_phase;
      bad.resource.subscriber.email = "leaked-value-not-an-email";
      const response = await post(app, bad);
      expectAnswer(response, 400, { processed: false, message: /resource\.execution_phase/ });
      expect(response.body.message).toContain("resource.subscriber.email");
      expect(response.body.message).not.toContain("leaked-value");
      expect(onRenew).not.toHaveBeenCalled();
    });

    it.each(["GET", "PUT", "DELETE"])("405 with Allow: POST for %s", async (method) => {
      const app = await receiver({ onRenew: vi.fn() });
      const response = await app.send({ method, headers: {} });
      expectAnswer(response, 405, { processed: false, message: /use POST/ });
      expect(response.headers.allow).toBe("POST");
    });

    it.each(["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"])(
      "415 for content-type %s",
      async (contentType) => {
        const onRenew = vi.fn();
        const app = await receiver({ onRenew });
        // JSON in another charset is told about the charset, not asked for JSON.
        expectAnswer(await post(app, notification(), { contentType }), 415, {
          processed: false,
          message: contentType.includes("charset") ? /charset must be utf-8/ : /content-type must be application\/json/,
        });
        expect(onRenew).not.toHaveBeenCalled();
      },
    );

    it("413 when the declared Content-Length is over bodyLimit", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew, bodyLimit: LIMIT });
      const response = await post(app, { ...notification(), pad: "x".repeat(5_000) });
      expect(response.status).toBe(413);
      expect(response.body).toEqual({ processed: false, message: `body exceeds the limit of ${LIMIT} bytes` });
      expect(onRenew).not.toHaveBeenCalled();
    });

    it("413 as soon as a body streamed with no Content-Length passes bodyLimit, without waiting for its end", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew, bodyLimit: LIMIT });
      const response = await post(
        app,
        { ...notification(), pad: "x".repeat(2_000) },
        { streamed: true, neverEnds: true },
      );
      expect(response.status).toBe(413);
      expect(response.body).toEqual({ processed: false, message: `body exceeds the limit of ${LIMIT} bytes` });
      expect(onRenew).not.toHaveBeenCalled();
    });

    if (!platform.buffersBody)
      it("408 processed:false when the body does not arrive within bodyTimeoutMs", async () => {
        const onRenew = vi.fn();
        const app = await receiver({ onRenew, bodyTimeoutMs: 200 });
        const response = await post(app, notification(), { streamed: true, neverEnds: true });
        expectAnswer(response, 408, { processed: false, message: /^body not received in time$/ });
        expect(onRenew).not.toHaveBeenCalled();
      });

    it("keeps answering after bad input", async () => {
      const onRenew = vi.fn();
      const app = await receiver({ onRenew, bodyLimit: LIMIT });
      await post(app, encode("{"));
      await post(app, { pad: "x".repeat(3_000) }, { streamed: true });
      expect((await post(app, notification())).status).toBe(200);
    });
  });

  describe("handler failures", () => {
    it("500 without echoing the error when the handler throws, and runs it again on redelivery", async () => {
      const onRenew = vi.fn().mockRejectedValueOnce(new Error("db password is hunter2"));
      const app = await receiver({ onRenew });
      const body = bytesOf(notification());
      const failed = await post(app, body);
      expectAnswer(failed, 500, { processed: false, message: /^handler failed$/ });
      expect(JSON.stringify(failed.body)).not.toContain("hunter2");
      expectAnswer(await post(app, body), 200, { processed: true, message: /^processed$/ });
      expect(onRenew).toHaveBeenCalledTimes(2);
    });

    it("500 when the handler outlives handlerTimeoutMs", async () => {
      const app = await receiver({ handlerTimeoutMs: 50, onRenew: () => new Promise<void>(() => {}) });
      expectAnswer(await post(app, notification()), 500, { processed: false, message: /^handler timed out$/ });
    });

    it("500 JSON 'internal error' for a failure in the adapter or core itself, logged as not processed", async () => {
      const { logger, lines } = captureLogger();
      // A log sink that fails on the success line: the failure happens after the handler, inside the core.
      logger.info = () => {
        throw new Error("log sink down");
      };
      const app = await receiver({ logger, onRenew: () => {} });
      expectAnswer(await post(app, notification()), 500, { processed: false, message: /^internal error$/ });
      expect(lines()).toContainEqual(expect.objectContaining({ level: 50, outcome: "internal_error", status: 500 }));
    });

    it("with failureStatus 200, answers HTTP 200 and lets processed carry the verdict", async () => {
      const app = await receiver({ failureStatus: 200, onRenew: () => Promise.reject(new Error("down")) });
      expectAnswer(await post(app, notification()), 200, { processed: false, message: /^handler failed$/ });
      expectAnswer(await post(app, encode("{")), 200, { processed: false, message: /not valid JSON/ });
      expectAnswer(await post(app, notification(), { contentType: "text/plain" }), 200, {
        processed: false,
        message: /application\/json/,
      });
      expectAnswer(await app.send({ method: "GET", headers: {} }), 200, { processed: false, message: /use POST/ });
    });
  });

  describe("idempotency store and queue", () => {
    it("200 'accepted for processing' once a durable queue has the notification", async () => {
      const onRenew = vi.fn();
      const enqueue = vi.fn(async () => {});
      const app = await receiver({ onRenew, queue: { durable: true, enqueue } });
      expectAnswer(await post(app, notification()), 200, { processed: true, message: /^accepted for processing$/ });
      expect(enqueue).toHaveBeenCalledTimes(1);
      expect(onRenew).not.toHaveBeenCalled();
    });

    it("503 with Retry-After, without running the handler, when the idempotency store is down", async () => {
      const down = () => Promise.reject(new StoreUnavailableError("connection refused"));
      const idempotency: IdempotencyStore = {
        claim: down,
        extend: down,
        complete: down,
        fail: down,
        markQueued: down,
        release: down,
        get: down,
      };
      const onRenew = vi.fn();
      const app = await receiver({ onRenew, idempotency });
      const response = await post(app, notification());
      expectAnswer(response, 503, { processed: false, message: /retry later/ });
      expect(Number(response.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(onRenew).not.toHaveBeenCalled();
    });
  });

  describe("logging", () => {
    it("writes one line per notification, and no card secret or personal data from ctx.log", async () => {
      const log = captureLogger();
      const app = await receiver({
        logger: log.logger,
        onRenew: (received, ctx) => void ctx.log.info({ notification: received }, "renewal received"),
      });
      const body = notification();
      await post(app, body);
      const lines = log.lines();
      expect(lines.find((line) => line.msg === "renewal received")).toBeDefined();
      expect(lines.filter((line) => line.notification_id === body.id && line.outcome === "processed")).toHaveLength(1);
      expect(log.text()).not.toMatch(/"cvc":"123"/);
      expect(log.text()).not.toContain("ada@example.com");
    });
  });

  if (mode.verify) {
    describe("signature", () => {
      it("401 'signature verification failed' when the body was changed after signing", async () => {
        const onRenew = vi.fn();
        const app = await receiver({ onRenew });
        const body = notification();
        const response = await post(app, { ...body, summary: "tampered" }, { signed: bytesOf(body) });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ processed: false, message: "signature verification failed" });
        expect(onRenew).not.toHaveBeenCalled();
      });

      it("401 with the same answer when the signature is missing", async () => {
        const onRenew = vi.fn();
        const app = await receiver({ onRenew });
        const response = await post(app, notification(), { unsigned: true });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ processed: false, message: "signature verification failed" });
        expect(onRenew).not.toHaveBeenCalled();
      });

      it("checks the signature before parsing: unsigned garbage is 401, not 400", async () => {
        const app = await receiver({ onRenew: vi.fn() });
        expect((await post(app, encode("{not json"), { unsigned: true })).status).toBe(401);
      });
    });
  }
}
