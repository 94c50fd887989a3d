import { Redis } from "ioredis";
import { StoreUnavailableError } from "merchant-webhooks";
import { DEFAULT_REDIS_PREFIX, failFastRedisOptions, type RedisStore, redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  type OwnRedisServer,
  ownRedisServer,
  REDIS_URL,
  removeKeys,
  uniquePrefix,
} from "../support/redis.js";

const answer = { processed: true, message: "processed" };
const request = (owner: string, extra: { id?: string; leaseMs?: number } = {}) => ({
  id: extra.id ?? "n-1",
  fingerprint: "f",
  owner,
  leaseMs: extra.leaseMs ?? 30_000,
});

/** How long a call took, and how it ended. */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const value = await call();
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

describe("redisStore on a shared Redis", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("store");
  const stores: RedisStore[] = [];
  const open = (options: { leaseMs?: number; retentionSeconds?: number; timeoutMs?: number } = {}) => {
    const store = redisStore({ connection: REDIS_URL, prefix, ...options });
    stores.push(store);
    return store;
  };

  afterAll(async () => {
    for (const store of stores) await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("keeps one hash per id under the prefix, expiring a retention period after its last change", async () => {
    const store = open({ retentionSeconds: 3_600 });
    await store.claim(request("o1", { id: "keys" }));
    const key = `${prefix}keys`;
    expect(await redis.hgetall(key)).toEqual({
      state: "processing",
      fingerprint: "f",
      owner: "o1",
      attempts: "1",
      leaseUntil: expect.stringMatching(/^\d{13}$/),
    });
    await redis.pexpire(key, 5_000); // pretend most of the retention has passed
    await store.complete({ id: "keys", owner: "o1" }, answer);
    expect(await redis.hgetall(key)).toEqual({
      state: "completed",
      fingerprint: "f",
      owner: "o1",
      attempts: "1",
      answer: JSON.stringify(answer),
    });
    expect(await redis.pttl(key)).toBeGreaterThan(3_590_000);
  });

  it("keeps a processing record at least as long as its lease, whatever the retention", async () => {
    const store = open({ retentionSeconds: 1 });
    await store.claim(request("o1", { id: "long-lease", leaseMs: 60_000 }));
    expect(await redis.pttl(`${prefix}long-lease`)).toBeGreaterThan(59_000);
    await store.complete({ id: "long-lease", owner: "o1" }, answer);
    expect(await redis.pttl(`${prefix}long-lease`)).toBeLessThanOrEqual(1_000);
  });

  it("measures leases on the server's clock", async () => {
    const store = open();
    const [seconds, micros] = await redis.time();
    await store.claim(request("o1", { id: "clock", leaseMs: 10_000 }));
    const serverNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    const { leaseUntil } = (await store.get("clock"))!;
    expect(leaseUntil! - serverNow).toBeGreaterThanOrEqual(10_000);
    expect(leaseUntil! - serverNow).toBeLessThan(10_500);
  });

  it("uses the prefix mw:idem: unless told otherwise", async () => {
    const store = redisStore({ connection: REDIS_URL });
    const id = `${prefix}default`;
    try {
      expect(store.prefix).toBe(DEFAULT_REDIS_PREFIX);
      await store.claim(request("o1", { id }));
      expect(await redis.hget(`mw:idem:${id}`, "owner")).toBe("o1");
    } finally {
      await redis.del(`mw:idem:${id}`);
      await store.close();
    }
  });

  it("leaves a lent client open when the store closes", async () => {
    const lent = new Redis(REDIS_URL, failFastRedisOptions());
    const store = redisStore({ connection: lent, prefix });
    await store.claim(request("o1", { id: "lent" }));
    await store.close();
    expect(await lent.hget(`${prefix}lent`, "owner")).toBe("o1");
    lent.disconnect();
  });

  it("puts a lent client's keyPrefix before every key it writes, as its other commands do", async () => {
    const lent = new Redis(REDIS_URL, { ...failFastRedisOptions(), keyPrefix: "kp:" });
    const store = redisStore({ connection: lent, prefix });
    expect(await store.claim(request("o1", { id: "prefixed" }))).toMatchObject({ status: "claimed", attempt: 1 });
    expect(await store.complete({ id: "prefixed", owner: "o1" }, answer)).toBe(true);
    expect(await redis.hget(`kp:${prefix}prefixed`, "state")).toBe("completed");
    expect(await store.get("prefixed")).toMatchObject({ state: "completed", answer });
    await store.close();
    await removeKeys(redis, `kp:${prefix}`);
    lent.disconnect();
  });

  it.each([
    ["a URL", () => REDIS_URL],
    ["ioredis options", () => ({ host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) })],
  ])("connects to %s given as `connection`, and closes what it connected", async (_form, connection) => {
    const store = redisStore({ connection: connection(), prefix });
    const id = `conn-${Math.random()}`;
    await store.claim(request("o1", { id }));
    expect(await redis.hget(`${prefix}${id}`, "owner")).toBe("o1");
    await store.close();
    await expect(store.ping()).rejects.toThrow(StoreUnavailableError);
  });

  it("refuses a missing `connection`, and `redis` (its name before 0.1.0) as an unknown option", () => {
    expect(() => redisStore({ prefix } as unknown as Parameters<typeof redisStore>[0])).toThrow(
      /redisStore: `connection` is required/,
    );
    expect(() => redisStore({ redis: REDIS_URL } as unknown as Parameters<typeof redisStore>[0])).toThrow(
      /redisStore: unknown option "redis"/,
    );
  });

  it("refuses options that cannot work", () => {
    expect(() => redisStore({ connection: REDIS_URL, leaseMs: 0 })).toThrow(RangeError);
    expect(() => redisStore({ connection: REDIS_URL, retentionSeconds: -1 })).toThrow(RangeError);
    expect(() => redisStore({ connection: REDIS_URL, timeoutMs: Number.NaN })).toThrow(RangeError);
  });
});

describe("redisStore when Redis is away", () => {
  let server: OwnRedisServer;
  const stores: RedisStore[] = [];
  const clients: Redis[] = [];
  beforeAll(async () => {
    server = await ownRedisServer();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    for (const client of clients) client.disconnect();
    await server?.stop();
  });
  const open = (redis: Redis | string = server.url) => {
    const store = redisStore({ connection: redis, prefix: "t:" });
    stores.push(store);
    return store;
  };

  it("fails at once with StoreUnavailableError when nothing listens, and keeps failing fast", async () => {
    const store = redisStore({ connection: "redis://127.0.0.1:1" });
    stores.push(store);
    const first = await timed(() => store.claim(request("o1")));
    expect(first.error).toBeInstanceOf(StoreUnavailableError);
    expect(first.ms).toBeLessThan(600);
    for (let i = 0; i < 5; i++) {
      const next = await timed(() => store.claim(request("o1")));
      expect(next.error).toBeInstanceOf(StoreUnavailableError);
      expect(next.ms).toBeLessThan(100);
    }
  });

  it("fails within the time limit while Redis hangs, and a late claim does not hold the id", async () => {
    // A lent client with ioredis defaults (offline queue, retries, no command timeout): the worst case.
    const lent = new Redis(server.url);
    clients.push(lent);
    // A 200 ms limit under the 700 ms bound below: room for a loaded machine's timers, and still far
    // from a claim that waits on a frozen Redis for as long as the freeze lasts.
    const store = redisStore({ connection: lent, prefix: "t:", timeoutMs: 200 });
    stores.push(store);
    await store.claim(request("warm-up", { id: "warm-up" }));
    server.freeze();
    try {
      const frozen = await timed(() => store.claim(request("o1", { id: "late" })));
      expect(frozen.error).toBeInstanceOf(StoreUnavailableError);
      expect(frozen.ms).toBeLessThan(700);
    } finally {
      server.thaw();
    }
    // The claim reached Redis after its caller gave up (and answered 503): the next delivery is not
    // kept waiting for the 30 s lease of a claim nobody works on.
    await eventually(async () => (await store.get("late"))?.attempts === 1, 2_000, "the late claim");
    expect(await store.claim(request("o2", { id: "late" }))).toEqual({
      status: "claimed",
      id: "late",
      owner: "o2",
      attempt: 2,
    });
  });

  it("carries on when the server forgets its scripts (SCRIPT FLUSH) under a live connection", async () => {
    const store = open();
    expect(await store.claim(request("o1", { id: "flushed" }))).toMatchObject({ status: "claimed", attempt: 1 });
    const admin = new Redis(server.url);
    clients.push(admin);
    await admin.script("FLUSH");
    expect(await store.complete({ id: "flushed", owner: "o1" }, answer)).toBe(true);
    expect(await store.claim(request("o2", { id: "flushed" }))).toEqual({ status: "completed", answer });
  });

  it("fails at once while Redis is down, and works again in the same process when it is back", async () => {
    const store = open();
    expect(await store.claim(request("o1", { id: "before" }))).toMatchObject({ status: "claimed", attempt: 1 });
    await server.stop();
    for (let i = 0; i < 5; i++) {
      const down = await timed(() => store.claim(request("o1", { id: `down-${i}` })));
      expect(down.error).toBeInstanceOf(StoreUnavailableError);
      expect(down.ms).toBeLessThan(100);
    }
    await server.start();
    const back = await eventually(
      () => Promise.resolve(store.claim(request("o1", { id: "after" }))).catch(() => undefined),
      5_000,
      "the store to reach Redis again",
    );
    expect(back).toEqual({ status: "claimed", id: "after", owner: "o1", attempt: 1 });
    expect(await store.complete({ id: "after", owner: "o1" }, answer)).toBe(true);
  });
});
