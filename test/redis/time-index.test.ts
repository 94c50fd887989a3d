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
    // Pushed out by an eighth of the retention more when less than one is left, not at every write.
    expect(ttl).toBeLessThanOrEqual(675_000);
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

  it("keeps a record in its own state's set alone through every change, a lapsed claim and a lost record too", async () => {
    const record = `${prefix}ix-4`;
    const listedIn = async () => {
      const states = ["processing", "queued", "completed", "failed"];
      const scores = await Promise.all(states.map((state) => redis.zscore(`${prefix}{all}:state:${state}`, record)));
      return states.filter((_, i) => scores[i] !== null);
    };
    const queued = {
      kind: "enqueue",
      id: "ix-4",
      fingerprint: "f",
      owner: "r",
      leaseMs: 30_000,
      queueAtClaim: true,
    } as const;
    expect(await store.claim(queued)).toMatchObject({ status: "claimed", queued: true });
    expect(await listedIn()).toEqual(["queued"]);
    const taken = { kind: "take", id: "ix-4", fingerprint: "f", owner: "w1", leaseMs: 30_000, attempt: 1 } as const;
    expect(await store.claim(taken)).toMatchObject({ status: "claimed" });
    expect(await listedIn()).toEqual(["processing"]);
    expect(await store.fail({ id: "ix-4", owner: "w1" }, "handler_failed")).toBe(true);
    expect(await listedIn()).toEqual(["failed"]);
    expect(await store.claim({ ...taken, owner: "w2", attempt: 2 })).toMatchObject({ status: "claimed" });
    expect(await listedIn()).toEqual(["processing"]);
    // A lapsed claim taken over stays processing, listed once.
    expect(await store.extend({ id: "ix-4", owner: "w2" }, 0)).toBe(true);
    expect(await store.claim({ ...taken, owner: "w3", attempt: 3 })).toMatchObject({ status: "claimed" });
    expect(await listedIn()).toEqual(["processing"]);
    expect(await store.complete({ id: "ix-4", owner: "w3" }, { processed: true, message: "ok" })).toBe(true);
    expect(await listedIn()).toEqual(["completed"]);
    // Gone from under its sets (expired, deleted by hand): claimed afresh, it leaves whatever it was listed in.
    await redis.del(record);
    expect(await store.claim({ ...taken, owner: "w4", attempt: 1 })).toMatchObject({ status: "claimed" });
    expect(await listedIn()).toEqual(["processing"]);
  });

  it("keeps each set it lists a record in alive as long as the record, without pushing its expiry at every write", async () => {
    const sets = ["time-index", "state:completed", "type:RENEW", "sub:I-1"].map((set) => `${prefix}{all}:${set}`);
    const listedAs = { eventType: "RENEW", subscriptionId: "I-1" };
    const settle = async (id: string) => {
      expect(await store.claim({ id, fingerprint: "f", owner: "o", leaseMs: 30_000, listedAs })).toMatchObject({
        status: "claimed",
      });
      expect(await store.complete({ id, owner: "o" }, { processed: true, message: "ok" })).toBe(true);
    };
    await settle("ix-5");
    const first = await Promise.all(sets.map((set) => redis.pttl(set)));
    const record = await redis.pttl(`${prefix}ix-5`);
    for (const ttl of first) expect(ttl).toBeGreaterThanOrEqual(record);
    // Once the clock has moved on, a later write finds more than a retention left and leaves it be.
    const index = sets[0]!;
    while ((await redis.pttl(index)) >= first[0]!) await new Promise((resolve) => setImmediate(resolve));
    const moved = await redis.pttl(index);
    await settle("ix-6");
    expect(await redis.pttl(index)).toBeLessThanOrEqual(moved);
    const later = await redis.pttl(`${prefix}ix-6`);
    for (const set of sets) expect(await redis.pttl(set)).toBeGreaterThanOrEqual(later);
  });

  it("is not written, and the store has no list, with timeIndex: false", async () => {
    const plain = redisStore({ connection: REDIS_URL, prefix: `${prefix}plain:`, timeIndex: false });
    expect(plain.list).toBeUndefined();
    expect((await plain.claim({ id: "ix-3", fingerprint: "f", owner: "o", leaseMs: 30_000 })).status).toBe("claimed");
    expect(await redis.exists(`${prefix}plain:{all}:time-index`)).toBe(0);
    await plain.close();
  });
});
