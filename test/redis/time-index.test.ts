import { Redis } from "ioredis";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

describe("redisStore's time index", () => {
  const prefix = uniquePrefix("time-index");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix, retentionSeconds: 600 });
  const index = `${prefix}{all}:time-index`;
  afterAll(async () => {
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("is written by the record's own scripts, at the server's time, and expires with the retention", async () => {
    const before = Number((await redis.time())[0]) * 1000;
    const claim = await store.claim({ id: "ix-1", fingerprint: "f", owner: "o", leaseMs: 30_000 });
    expect(claim.status).toBe("claimed");
    const claimedAt = Number(await redis.zscore(index, `${prefix}ix-1`));
    expect(claimedAt).toBeGreaterThanOrEqual(before);
    expect(await store.list!({})).toMatchObject({ items: [{ id: "ix-1", state: "processing", updatedAt: claimedAt }] });
    // An extend is not a change the console lists by; a completion is.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await store.extend({ id: "ix-1", owner: "o" })).toBe(true);
    expect(Number(await redis.zscore(index, `${prefix}ix-1`))).toBe(claimedAt);
    expect(await store.complete({ id: "ix-1", owner: "o" }, { processed: true, message: "ok" })).toBe(true);
    expect(Number(await redis.zscore(index, `${prefix}ix-1`))).toBeGreaterThan(claimedAt);
    const ttl = await redis.pttl(index);
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
  });

  it("lets go of a released record, and of a claim another owner holds nothing", async () => {
    const claim = await store.claim({ id: "ix-2", fingerprint: "f", owner: "o", leaseMs: 30_000 });
    expect(claim.status).toBe("claimed");
    // A refused write (wrong owner) changes neither the record nor the index.
    expect(await store.fail({ id: "ix-2", owner: "intruder" }, "no")).toBe(false);
    expect((await store.list!({ id: "ix-2" })).items).toMatchObject([{ state: "processing" }]);
    expect(await store.release({ id: "ix-2", owner: "o" })).toBe(true);
    expect(await redis.zscore(index, `${prefix}ix-2`)).toBeNull();
    expect((await store.list!({ id: "ix-2" })).items).toEqual([]);
  });

  it("is not written, and the store has no list, with timeIndex: false", async () => {
    const plain = redisStore({ connection: REDIS_URL, prefix: `${prefix}plain:`, timeIndex: false });
    expect(plain.list).toBeUndefined();
    expect((await plain.claim({ id: "ix-3", fingerprint: "f", owner: "o", leaseMs: 30_000 })).status).toBe("claimed");
    expect(await redis.exists(`${prefix}plain:{all}:time-index`)).toBe(0);
    await plain.close();
  });
});
