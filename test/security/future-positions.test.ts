import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { resolveOrdering } from "../../src/receiver/options.js";
import { silentLogger } from "../support/capture-logger.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const FAR_FUTURE = "9999-12-31T23:59:59Z";

let subscriptions = 0;
const subscription = () => `SUB-future-${process.pid}-${++subscriptions}`;

const event = (type: "SUBSCRIPTION_RENEW" | "SUBSCRIPTION_CANCELLED", sub: string, updateTime: string) =>
  buildNotification(type, { resource: { merchant_id: "M-1", id: sub, update_time: updateTime } }, { random: true });

const post = (notification: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(JSON.stringify(notification)),
});

const answerOf = async (response: Promise<{ status: number; body: string }>) => {
  const { status, body } = await response;
  return { status, ...(JSON.parse(body) as { processed: boolean; message: string }) };
};

const redis = new Redis(REDIS_URL);
const prefix = uniquePrefix("future-positions");
afterAll(async () => {
  await removeKeys(redis, prefix);
  redis.disconnect();
});

function futureSuite(name: string, makeStore: () => IdempotencyStore) {
  describe(`a position far in the future, on ${name}`, () => {
    it("runs its handler once but cannot make the subscription's real cancellation stale", async () => {
      const sub = subscription();
      const onRenew = vi.fn();
      const onCancel = vi.fn();
      const onStale = vi.fn();
      const receiver = createReceiver({
        idempotency: makeStore(),
        logger: silentLogger(),
        ordering: true,
        onRenew,
        onCancel,
        onStale,
      });
      const forged = await answerOf(receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, FAR_FUTURE))));
      expect(forged).toMatchObject({ status: 200, processed: true });
      expect(onRenew).toHaveBeenCalledTimes(1);

      const cancel = event("SUBSCRIPTION_CANCELLED", sub, new Date().toISOString());
      const answer = await answerOf(receiver.handle(post(cancel)));
      expect(answer).toMatchObject({ status: 200, processed: true });
      expect(answer.message).not.toMatch(/stale/);
      expect(onCancel).toHaveBeenCalledTimes(1);
      expect(onStale).not.toHaveBeenCalled();
      // The cancellation moved the position: an older renewal is now stale, as it should be.
      const late = await answerOf(
        receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, new Date(Date.now() - 60_000).toISOString()))),
      );
      expect(late.message).toMatch(/^stale: /);
      expect(onRenew).toHaveBeenCalledTimes(1);
      await receiver.close();
    });

    it("takes a position within the allowed skew, and any position when the skew is Infinity", async () => {
      const soon = new Date(Date.now() + 60 * 60_000).toISOString();
      for (const [maxFutureSkewMs, at, staleAfter] of [
        [undefined, soon, true],
        [Number.POSITIVE_INFINITY, FAR_FUTURE, true],
        [0, soon, false],
      ] as const) {
        const sub = subscription();
        const onCancel = vi.fn();
        const receiver = createReceiver({
          idempotency: makeStore(),
          logger: silentLogger(),
          ordering: maxFutureSkewMs === undefined ? true : { maxFutureSkewMs },
          onRenew: () => {},
          onCancel,
        });
        await receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, at)));
        const answer = await answerOf(
          receiver.handle(post(event("SUBSCRIPTION_CANCELLED", sub, new Date().toISOString()))),
        );
        expect(answer.message.startsWith("stale"), `skew ${maxFutureSkewMs}`).toBe(staleAfter);
        await receiver.close();
      }
    });
  });
}

futureSuite("memoryStore", () => memoryStore());
futureSuite("redisStore", () => redisStore({ connection: redis, prefix }));

describe("what redisStore keeps for a subscription after a far-future notification", () => {
  it("holds no position from it in Redis", async () => {
    const sub = subscription();
    const receiver = createReceiver({
      idempotency: redisStore({ connection: redis, prefix }),
      logger: silentLogger(),
      ordering: true,
      onRenew: () => {},
    });
    await receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, FAR_FUTURE)));
    const keys = await redis.keys(`${prefix}*${sub}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const type = await redis.type(key);
      // A hash is a record; a sorted set, the console's list by subscription (scored by the time it was written).
      const dump =
        type === "hash"
          ? JSON.stringify(await redis.hgetall(key))
          : type === "zset"
            ? JSON.stringify(await redis.zrange(key, 0, -1, "WITHSCORES"))
            : String(await redis.get(key));
      // Neither as text nor as epoch milliseconds (a bare "9999" could be part of any timestamp).
      expect(dump).not.toContain("9999-12-31");
      expect(dump).not.toContain(String(Date.parse(FAR_FUTURE)).slice(0, 9));
    }
    await receiver.close();
  });
});

describe("ordering.maxFutureSkewMs", () => {
  it("refuses a negative or non-numeric skew at start-up", () => {
    for (const bad of [-1, Number.NaN, "1d"])
      expect(() => resolveOrdering({ maxFutureSkewMs: bad as never })).toThrow(/maxFutureSkewMs/);
  });
});
