import { Redis } from "ioredis";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { orderedKeys } from "../../src/redis/ordered-scripts.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** The part of a key Redis Cluster hashes: the first `{...}` with something inside, else the whole key. */
function hashTagOf(key: string): string {
  const open = key.indexOf("{");
  const close = key.indexOf("}", open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

describe("redisStore keys of notifications claimed in order", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("ordered-keys");
  const store = redisStore({ connection: REDIS_URL, prefix });

  afterAll(async () => {
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("puts a subscription's records and its position under one hash tag, the subscription", async () => {
    const orderKey = "M-1:SUB-9";
    await store.claim({
      id: "evt-1",
      fingerprint: "f",
      owner: "o1",
      leaseMs: 30_000,
      order: { key: orderKey, position: "2026-03-01T02:00:00.25" },
    });
    await store.complete(
      { id: "evt-1", owner: "o1", order: { key: orderKey } },
      { processed: true, message: "processed" },
    );
    const keys = orderedKeys(prefix, orderKey, "evt-1");
    expect(keys.record).toBe(`${prefix}{M-1:SUB-9}:n:evt-1`);
    expect(hashTagOf(keys.record)).toBe(hashTagOf(keys.order));
    expect(await redis.hget(keys.record, "state")).toBe("completed");
    expect(await redis.hgetall(keys.order)).toMatchObject({ position: "2026-03-01T02:00:00.25" });
    // Kept as long as the records: the retention of the last change.
    expect(await redis.pttl(keys.order)).toBeGreaterThan(6 * 24 * 3600 * 1000);
  });

  it("escapes braces in the order key, so the tag is the same whole key in both", () => {
    for (const orderKey of ["{m}:1", "m}{1", "a%7Db", "}"]) {
      const keys = orderedKeys(prefix, orderKey, "evt-{x}");
      expect(hashTagOf(keys.record)).toBe(hashTagOf(keys.order));
      expect(decodeURIComponent(hashTagOf(keys.record))).toBe(orderKey);
    }
  });
});
