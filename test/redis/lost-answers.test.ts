import { Redis } from "ioredis";
import { StoreUnavailableError } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { delayingProxy } from "../support/delaying-proxy.js";
import { REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";

const answer = { processed: true, message: "processed" };
const TIMEOUT_MS = 200;

/**
 * Calls whose answer never arrives though Redis applied them: the store must undo what they did, or
 * the claim they made holds its record (or its subscription) for a whole lease with nobody working.
 */
describe("redisStore: a call applied by Redis whose answer is lost", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("lost");
  afterAll(async () => {
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  /** The store behind a proxy that can hold its answers back past the store's limit. */
  const storeWithLateAnswers = async () => {
    const target = new URL(REDIS_URL);
    const proxy = await delayingProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const store = redisStore({ connection: proxy.url, prefix, timeoutMs: TIMEOUT_MS, leaseMs: 30_000 });
    await store.ping();
    return {
      store,
      lateAnswers: (on: boolean) => proxy.delayReplies(on ? TIMEOUT_MS * 2 : 0),
      close: async () => {
        await store.close();
        await proxy.close();
      },
    };
  };

  it("undoes a hand-over to the next waiter (takeNext): the subscription's next notification runs at once, not a lease later", async () => {
    const { store, lateAnswers, close } = await storeWithLateAnswers();
    try {
      const order = (position: string) => ({ key: "sub-lost", position });
      const queued = async (id: string, position: string) => {
        const claim = await store.claim({
          id,
          fingerprint: `f-${id}`,
          owner: `r-${id}`,
          leaseMs: 30_000,
          order: order(position),
          kind: "append",
        });
        expect(claim.status).toBe("claimed");
        expect(await store.markQueued({ id, owner: `r-${id}`, order: order(position) })).toBe(true);
      };
      await queued("a", "2026-03-01T01:00:00");
      await queued("b", "2026-03-01T02:00:00");
      await queued("c", "2026-03-01T03:00:00");

      const first = await store.claim({
        id: "a",
        fingerprint: "f-a",
        owner: "w1",
        leaseMs: 30_000,
        order: order("2026-03-01T01:00:00"),
        kind: "take",
      });
      expect(first).toMatchObject({ status: "claimed", id: "a" });
      expect(await store.complete({ id: "a", owner: "w1", order: { key: "sub-lost" } }, answer)).toBe(true);

      // Redis hands "b" to w2, but the answer misses the store's limit.
      lateAnswers(true);
      await expect(store.lanes.takeNext({ key: "sub-lost" }, "w2", 30_000)).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      lateAnswers(false);
      // The late answer (and the undo behind it) arrive; the connection is in step again.
      await sleep(TIMEOUT_MS * 3);

      // w2 never learnt it holds "b": "b" is back in line, first, and the key is free for the next worker.
      const next = await store.lanes.takeNext({ key: "sub-lost" }, "w3", 30_000);
      expect(next).toMatchObject({ status: "claimed", id: "b", owner: "w3" });
      expect(await store.get({ id: "b", order: { key: "sub-lost" } })).toMatchObject({
        state: "processing",
        owner: "w3",
      });
      // And w2's late knowledge changes nothing.
      expect(await store.complete({ id: "b", owner: "w2", order: { key: "sub-lost" } }, answer)).toBe(false);
    } finally {
      await close();
    }
  });
});
