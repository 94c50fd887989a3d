import {
  createReceiver,
  type IdempotencyStore,
  memoryStore,
  type ReceiverOptions,
  StoreUnavailableError,
} from "merchant-webhooks";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const JSON_TYPE = { "content-type": "application/json" };

function receiverWith(options: Partial<ReceiverOptions> = {}) {
  return createReceiver({ logger: silentLogger(), onRenew: () => {}, ...options });
}

const post = (body: Uint8Array, headers: Record<string, string> = JSON_TYPE) => ({
  method: "POST",
  headers,
  rawBody: body,
});

function brokenStore(): IdempotencyStore {
  const down = () => Promise.reject(new StoreUnavailableError("connection refused"));
  return { claim: down, extend: down, complete: down, fail: down, markQueued: down, release: down, get: down };
}

describe("the answer's status table (core)", () => {
  it("200 processed when the handler succeeds", async () => {
    const onRenew = vi.fn();
    const response = await receiverWith({ onRenew }).handle(post(json(notification())));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ processed: true, message: "processed" });
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("200 processed for a duplicate of a completed notification, without calling the handler again", async () => {
    const onRenew = vi.fn();
    const receiver = receiverWith({ onRenew });
    const body = json(notification());
    await receiver.handle(post(body));
    const again = await receiver.handle(post(body));
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ processed: true, message: "already processed" });
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("200 processed when no handler is registered for the event type", async () => {
    const response = await receiverWith().handle(post(json(notification("SUBSCRIPTION_SUSPENDED"))));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).processed).toBe(true);
  });

  it("200 processed when accepted into a durable queue", async () => {
    const onRenew = vi.fn();
    const enqueue = vi.fn(async () => {});
    const store = memoryStore();
    const body = notification();
    const response = await receiverWith({ onRenew, idempotency: store, queue: { durable: true, enqueue } }).handle(
      post(json(body)),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ processed: true, message: "accepted for processing" });
    expect(enqueue).toHaveBeenCalledTimes(1);
    expect(onRenew).not.toHaveBeenCalled();
    expect(store.get(body.id)).toMatchObject({ state: "queued" });
  });

  it.each([
    ["not JSON", new TextEncoder().encode("{not json"), "body is not valid JSON"],
    ["a JSON array", json([1, 2]), "body must be a JSON object"],
    ["a JSON string", json("hello"), "body must be a JSON object"],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), "body is not valid UTF-8"],
  ])("400 when the body is %s", async (_case, body, message) => {
    const response = await receiverWith().handle(post(body));
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({ processed: false, message });
  });

  it("400 naming the failing field paths, never the values, when the envelope fails the schema", async () => {
    const bad = notification();
    delete bad.resource.execution_phase;
    bad.resource.subscriber.email = "secret-not-an-email";
    const response = await receiverWith().handle(post(json(bad)));
    expect(response.status).toBe(400);
    const answer = JSON.parse(response.body);
    expect(answer.processed).toBe(false);
    expect(answer.message).toContain("resource.execution_phase");
    expect(answer.message).toContain("resource.subscriber.email");
    expect(answer.message).not.toContain("secret-not-an-email");
  });

  it("401 when the signature check fails, before the body is parsed", async () => {
    const onRenew = vi.fn();
    const verify = vi.fn(() => false);
    const response = await receiverWith({ onRenew, verify }).handle(post(new TextEncoder().encode("{not json")));
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toEqual({ processed: false, message: "signature verification failed" });
    expect(onRenew).not.toHaveBeenCalled();
  });

  it("401 when the verify hook throws", async () => {
    const response = await receiverWith({
      verify: () => {
        throw new Error("bad key");
      },
    }).handle(post(json(notification())));
    expect(response.status).toBe(401);
  });

  it("405 with Allow for any method but POST", async () => {
    const response = await receiverWith().handle({ method: "GET", headers: {} });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("POST");
    expect(JSON.parse(response.body).processed).toBe(false);
  });

  it("409 with Retry-After while the same id is being processed elsewhere", async () => {
    let release!: () => void;
    const onRenew = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const receiver = receiverWith({ onRenew });
    const body = json(notification());
    const first = receiver.handle(post(body));
    await vi.waitFor(() => expect(onRenew).toHaveBeenCalled());
    const second = await receiver.handle(post(body));
    expect(second.status).toBe(409);
    expect(Number(second.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(second.body).processed).toBe(false);
    release();
    expect((await first).status).toBe(200);
  });

  it("413 when the body is over bodyLimit", async () => {
    const response = await receiverWith({ bodyLimit: 100 }).handle(post(json(notification())));
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ processed: false, message: "body exceeds the limit of 100 bytes" });
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"])(
    "415 for content-type %s",
    async (type) => {
      const response = await receiverWith().handle(post(json(notification()), { "content-type": type }));
      expect(response.status).toBe(415);
      expect(JSON.parse(response.body).processed).toBe(false);
    },
  );

  it.each([undefined, "application/json; charset=utf-8", "application/cloudevents+json"])(
    "accepts content-type %s",
    async (type) => {
      const headers: Record<string, string> = type ? { "content-type": type } : {};
      expect((await receiverWith().handle(post(json(notification()), headers))).status).toBe(200);
    },
  );

  it("422 when a completed id comes back with a different payload", async () => {
    const onRenew = vi.fn();
    const receiver = receiverWith({ onRenew });
    const original = notification();
    await receiver.handle(post(json(original)));
    const changed = { ...original, summary: "something else" };
    const response = await receiver.handle(post(json(changed)));
    expect(response.status).toBe(422);
    expect(JSON.parse(response.body).processed).toBe(false);
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("500 when the handler throws, without echoing its message", async () => {
    const response = await receiverWith({
      onRenew: () => {
        throw new Error("db password is hunter2");
      },
    }).handle(post(json(notification())));
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ processed: false, message: "handler failed" });
  });

  it("500 when the handler times out", async () => {
    const response = await receiverWith({ handlerTimeoutMs: 20, onRenew: () => new Promise(() => {}) }).handle(
      post(json(notification())),
    );
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ processed: false, message: "handler timed out" });
  });

  it("503 with Retry-After when the idempotency store is unavailable, and the handler does not run", async () => {
    const onRenew = vi.fn();
    const response = await receiverWith({ onRenew, idempotency: brokenStore(), retryAfterSeconds: 7 }).handle(
      post(json(notification())),
    );
    expect(response.status).toBe(503);
    expect(response.headers["retry-after"]).toBe("7");
    expect(JSON.parse(response.body).processed).toBe(false);
    expect(onRenew).not.toHaveBeenCalled();
  });

  it("503 when the queue refuses the notification, and the claim is released for the redelivery", async () => {
    const store = memoryStore();
    const body = notification();
    const queue = {
      durable: true,
      enqueue: vi.fn().mockRejectedValueOnce(new Error("redis down")).mockResolvedValue(undefined),
    };
    const receiver = receiverWith({ idempotency: store, queue });
    const refused = await receiver.handle(post(json(body)));
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(store.get(body.id)).toBeUndefined();
    expect((await receiver.handle(post(json(body)))).status).toBe(200);
  });

  describe("failureStatus: 200", () => {
    it("answers every outcome with HTTP 200 and lets processed carry the verdict", async () => {
      const receiver = receiverWith({
        failureStatus: 200,
        onRenew: () => {
          throw new Error("boom");
        },
      });
      const cases = [
        await receiver.handle({ method: "GET", headers: {} }),
        await receiver.handle(post(new TextEncoder().encode("nope"))),
        await receiver.handle(post(json(notification()), { "content-type": "text/plain" })),
        await receiver.handle(post(json(notification()))),
      ];
      for (const response of cases) {
        expect(response.status).toBe(200);
        expect(JSON.parse(response.body).processed).toBe(false);
      }
    });
  });
});
