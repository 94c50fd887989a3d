import { createReceiver, type IdempotencyStore, inProcessQueue, memoryStore } from "merchant-webhooks";
import { bullmqQueue } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterEach, describe, expect, it } from "vitest";
import { type OwnRedisServer, ownRedisServer, uniquePrefix } from "../support/redis.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

describe("receiver.health()", () => {
  it("is ok on the in-memory store with no queue", async () => {
    const receiver = createReceiver({ idempotency: memoryStore() });
    expect(await receiver.health()).toEqual({ ok: true, store: "up", queue: "none", inFlight: 0, maxInFlight: 1000 });
  });

  it("counts a store that does not answer within the time-out as down", async () => {
    const hanging: IdempotencyStore = { ...memoryStore(), ping: () => new Promise<void>(() => {}) };
    const receiver = createReceiver({ idempotency: hanging });
    expect(await receiver.health({ timeoutMs: 50 })).toMatchObject({ ok: false, store: "down", queue: "none" });
  });

  it("reports a store without ping as unknown and still ok", async () => {
    const { ping: _ping, ...withoutPing } = memoryStore();
    const receiver = createReceiver({ idempotency: withoutPing as IdempotencyStore });
    expect(await receiver.health()).toEqual({
      ok: true,
      store: "unknown",
      queue: "none",
      inFlight: 0,
      maxInFlight: 1000,
    });
  });

  it("reports an in-process queue that is closing as down: it refuses notifications", async () => {
    const queue = inProcessQueue();
    const receiver = createReceiver({ queue });
    expect(await receiver.health()).toEqual({
      ok: true,
      store: "up",
      queue: "up",
      inFlight: 0,
      maxInFlight: 1000,
      acceptedKept: false,
    });
    await queue.close();
    expect(await receiver.health()).toEqual({
      ok: false,
      store: "up",
      queue: "down",
      inFlight: 0,
      maxInFlight: 1000,
      acceptedKept: false,
    });
  });

  describe("on Redis", () => {
    let server: OwnRedisServer;

    it("follows Redis going down and coming back, for the store and the BullMQ queue", async () => {
      server = await ownRedisServer();
      closers.push(() => server.stop());
      const store = redisStore({ connection: server.url, prefix: uniquePrefix("health") });
      const queue = bullmqQueue({ connection: server.url, name: uniquePrefix("health-queue").slice(0, -1) });
      closers.push(
        () => store.close(),
        () => queue.close(),
      );
      const receiver = createReceiver({ idempotency: store, queue });

      await queue.queue.waitUntilReady();
      expect(await receiver.health()).toMatchObject({ ok: true, store: "up", queue: "up" });

      await server.stop();
      const down = await receiver.health();
      expect(down).toMatchObject({ ok: false, store: "down", queue: "down" });
      expect(Date.parse(down.storeDownSince!)).toBeLessThanOrEqual(Date.now());

      await server.start();
      await expect
        .poll(() => receiver.health(), { timeout: 10_000, interval: 100 })
        .toMatchObject({ ok: true, store: "up", queue: "up" });
      expect((await receiver.health()).storeDownSince).toBeUndefined();
    });
  });
});
