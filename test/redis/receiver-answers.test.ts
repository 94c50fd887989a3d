import { Redis } from "ioredis";
import { createReceiver, type ReceiverOptions } from "merchant-webhooks";
import { type RedisStore, redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import {
  eventually,
  type OwnRedisServer,
  ownRedisServer,
  REDIS_URL,
  removeKeys,
  uniquePrefix,
} from "../support/redis.js";

const body = (response: { body: string }) => JSON.parse(response.body) as { processed: boolean; message: string };

/** The core receiver's answers with a Redis store behind it, as the sender sees them. */
describe("a receiver on redisStore", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("answers");
  const stores: RedisStore[] = [];
  const receiverOn = (options: Partial<ReceiverOptions> & { store?: RedisStore } = {}) => {
    const store = options.store ?? redisStore({ connection: REDIS_URL, prefix });
    stores.push(store);
    return createReceiver({ logger: silentLogger(), idempotency: store, ...options });
  };
  afterAll(async () => {
    for (const store of stores) await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("answers a duplicate of a completed notification 200 without running the handler again", async () => {
    let calls = 0;
    const receiver = receiverOn({ onRenew: () => void calls++ });
    const renewal = notification();
    const first = await receiver.handle(post(renewal));
    const again = await receiverOn({ onRenew: () => void calls++ }).handle(post(renewal));
    expect([first.status, body(first)]).toEqual([200, { processed: true, message: "processed" }]);
    expect([again.status, body(again)]).toEqual([200, { processed: true, message: "already processed" }]);
    expect(calls).toBe(1);
  });

  it("answers 422 to the same id with a different payload after completion", async () => {
    let calls = 0;
    const receiver = receiverOn({ onRenew: () => void calls++ });
    const renewal = notification();
    await receiver.handle(post(renewal));
    const altered = { ...renewal, create_time: "2026-11-24T00:00:00Z" };
    const conflict = await receiverOn({ onRenew: () => void calls++ }).handle(post(altered));
    expect([conflict.status, body(conflict).processed]).toEqual([422, false]);
    expect(calls).toBe(1);
  });

  it("answers 409 with Retry-After while another receiver runs the handler, and 200 once it is done", async () => {
    let release = () => {};
    const running = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const slow = receiverOn({
      onRenew: () => {
        calls++;
        return running;
      },
    });
    const other = receiverOn({ onRenew: () => void calls++ });
    const renewal = notification();
    const first = slow.handle(post(renewal));
    await eventually(() => calls === 1, 5_000, "the first handler to start");
    const busy = await other.handle(post(renewal));
    expect(busy.status).toBe(409);
    expect(body(busy).processed).toBe(false);
    expect(Number(busy.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    release();
    expect((await first).status).toBe(200);
    expect((await other.handle(post(renewal))).status).toBe(200);
    expect(calls).toBe(1);
  });

  it("answers 500 when the handler throws, and runs it again on the redelivery", async () => {
    const attempts: number[] = [];
    const receiver = receiverOn({
      onRenew: (_n, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new Error("database down");
      },
    });
    const renewal = notification();
    expect((await receiver.handle(post(renewal))).status).toBe(500);
    expect((await receiver.handle(post(renewal))).status).toBe(200);
    expect(attempts).toEqual([1, 2]);
  });
});

describe("a receiver on redisStore when Redis fails", () => {
  let server: OwnRedisServer;
  const stores: RedisStore[] = [];
  beforeAll(async () => {
    server = await ownRedisServer();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await server?.stop();
  });
  const storeOn = () => {
    const store = redisStore({ connection: server.url, prefix: "t:" });
    stores.push(store);
    return store;
  };

  it("answers 503 with Retry-After and runs no handler while Redis is down", async () => {
    let calls = 0;
    const store = storeOn();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, onRenew: () => void calls++ });
    expect((await receiver.handle(post(notification()))).status).toBe(200);
    await server.stop();
    try {
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const response = await receiver.handle(post(notification()));
        expect(performance.now() - started).toBeLessThan(100);
        expect(response.status).toBe(503);
        expect(body(response).processed).toBe(false);
        expect(response.headers["retry-after"]).toBe("5");
      }
      expect(calls).toBe(1);
    } finally {
      await server.start();
    }
  });

  it("answers processed: true when only the final write fails, and records the completion once Redis answers", async () => {
    let calls = 0;
    const store = storeOn();
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      onRenew: () => {
        calls++;
        server.freeze(); // Redis hangs after the claim, before the completion is written
      },
    });
    const renewal = notification();
    let response;
    try {
      response = await receiver.handle(post(renewal));
    } finally {
      server.thaw();
    }
    expect([response.status, body(response)]).toEqual([200, { processed: true, message: "processed" }]);
    await eventually(
      async () => (await store.get(renewal.id))?.state === "completed",
      5_000,
      "the completion to be recorded",
    );
    expect((await receiver.handle(post(renewal))).status).toBe(200);
    expect(calls).toBe(1);
    await receiver.close();
  });
});
