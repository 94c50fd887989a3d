import { Redis } from "ioredis";
import { type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { postgresStore, purge } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import type { ListQuery } from "../../src/idempotency/store.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";

const answer = { processed: true, message: "processed" };

interface Backend {
  store: IdempotencyStore;
  /** Settled records past `retentionSeconds` gone, as the store drops them (expiry, purge). */
  expire(): Promise<void>;
  cleanup(): Promise<void>;
}

/** Every id a filter lists, across its pages of 2 (so paging along a filter's index is seen too). */
async function listed(store: IdempotencyStore, query: ListQuery): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list!({ ...query, limit: 2, ...(cursor ? { cursor } : {}) });
    ids.push(...page.items.map((item) => item.id));
    cursor = page.cursor;
  } while (cursor);
  return ids;
}

/** Listed by none of these filters, each alone, nor with none. */
async function listedNowhere(store: IdempotencyStore, filters: ListQuery): Promise<void> {
  const each = Object.entries(filters).map(([name, value]) => ({ [name]: value }) as ListQuery);
  for (const query of [...each, {}]) expect(await listed(store, query)).toEqual([]);
}

function filterContract(label: string, make: (retentionSeconds: number) => Promise<Backend>): void {
  describe(`list filters on ${label}`, () => {
    const backends: Backend[] = [];
    afterAll(async () => {
      for (const backend of backends) await backend.cleanup();
    });
    const backend = async (retentionSeconds = 600) => {
      const made = await make(retentionSeconds);
      backends.push(made);
      return made;
    };
    const claim = (store: IdempotencyStore, id: string, eventType: string, subscriptionId: string) =>
      store.claim({ id, fingerprint: "f", owner: `o-${id}`, leaseMs: 30_000, listedAs: { eventType, subscriptionId } });

    it("lists by state, event type, subscription and time exactly the records that match, newest first", async () => {
      const { store } = await backend();
      await claim(store, "a", "SUBSCRIPTION_RENEW", "SUB-1");
      await claim(store, "b", "SUBSCRIPTION_CANCELLED", "SUB-1");
      await claim(store, "c", "SUBSCRIPTION_RENEW", "SUB-2");
      await claim(store, "d", "SUBSCRIPTION_RENEW", "SUB-1");
      await sleep(5);
      const middle = Date.now();
      await sleep(5);
      expect(await store.complete({ id: "a", owner: "o-a" }, answer)).toBe(true);
      expect(await store.fail({ id: "c", owner: "o-c" }, "handler_failed")).toBe(true);

      expect(await listed(store, { eventType: "SUBSCRIPTION_RENEW" })).toEqual(["c", "a", "d"]);
      expect(await listed(store, { subscriptionId: "SUB-1" })).toEqual(["a", "d", "b"]);
      expect(await listed(store, { state: "processing" })).toEqual(["d", "b"]);
      expect(await listed(store, { state: "failed" })).toEqual(["c"]);
      expect(await listed(store, { until: middle })).toEqual(["d", "b"]);
      expect(await listed(store, { since: middle })).toEqual(["c", "a"]);
      expect(
        await listed(store, { state: "processing", subscriptionId: "SUB-1", eventType: "SUBSCRIPTION_RENEW" }),
      ).toEqual(["d"]);
      expect(await listed(store, { eventType: "SUBSCRIPTION_SUSPENDED" })).toEqual([]);
      // Each line says what it was filtered by.
      expect((await store.list!({ id: "b" })).items).toMatchObject([
        { id: "b", eventType: "SUBSCRIPTION_CANCELLED", subscriptionId: "SUB-1" },
      ]);
    });

    it("moves a record from one state's page to the next as it changes, keeping its event type and subscription", async () => {
      const { store } = await backend();
      await claim(store, "m", "SUBSCRIPTION_RENEW", "SUB-9");
      expect(await store.fail({ id: "m", owner: "o-m" }, "handler_failed")).toBe(true);
      expect(await listed(store, { state: "failed" })).toEqual(["m"]);
      // Redriven: a claim that tells nothing of the notification (a worker's, the console's) keeps what it had.
      const again = await store.claim({ id: "m", fingerprint: "f", owner: "o-m2", leaseMs: 30_000 });
      expect(again.status).toBe("claimed");
      expect(await listed(store, { state: "failed" })).toEqual([]);
      expect(await listed(store, { state: "processing" })).toEqual(["m"]);
      expect(await store.complete({ id: "m", owner: "o-m2" }, answer)).toBe(true);
      expect(await listed(store, { state: "processing" })).toEqual([]);
      expect(await listed(store, { state: "completed", subscriptionId: "SUB-9" })).toEqual(["m"]);
      expect(await listed(store, { eventType: "SUBSCRIPTION_RENEW" })).toEqual(["m"]);
    });

    it("drops a released record from every filter", async () => {
      const { store } = await backend();
      await claim(store, "r", "SUBSCRIPTION_RENEW", "SUB-3");
      expect(await store.release({ id: "r", owner: "o-r" })).toBe(true);
      await listedNowhere(store, { state: "processing", eventType: "SUBSCRIPTION_RENEW", subscriptionId: "SUB-3" });
    });

    it("drops a record past its retention from every filter", async () => {
      const made = await backend(1);
      const { store } = made;
      await claim(store, "x", "SUBSCRIPTION_RENEW", "SUB-4");
      expect(await store.fail({ id: "x", owner: "o-x" }, "handler_failed")).toBe(true);
      expect(await listed(store, { subscriptionId: "SUB-4" })).toEqual(["x"]);
      await sleep(1_200);
      await made.expire();
      await listedNowhere(store, { state: "failed", eventType: "SUBSCRIPTION_RENEW", subscriptionId: "SUB-4" });
    });
  });
}

filterContract("memoryStore", async (retentionSeconds) => ({
  store: memoryStore({ retentionSeconds }),
  async expire() {},
  async cleanup() {},
}));

const redis = new Redis(REDIS_URL);
afterAll(() => redis.disconnect());
filterContract("redisStore", async (retentionSeconds) => {
  const prefix = uniquePrefix("list-filters");
  const store = redisStore({ connection: REDIS_URL, prefix, retentionSeconds });
  return {
    store,
    async expire() {
      // Its hash expired, and every set it was in with it (each expires a retention after its last write).
      for (const set of ["time-index", "state:failed", "type:SUBSCRIPTION_RENEW", "sub:SUB-4"])
        expect(await redis.zscore(`${prefix}{all}:${set}`, `${prefix}x`)).toBeNull();
    },
    async cleanup() {
      await store.close();
      await removeKeys(redis, prefix);
    },
  };
});

filterContract("postgresStore", async (retentionSeconds) => {
  const schema = uniqueSchema("list_filters");
  const pool = testPool(4);
  await freshSchema(pool, schema);
  return {
    store: postgresStore({ connection: pool, schema, retentionSeconds }),
    async expire() {
      await purge(pool, { schema, olderThanSeconds: retentionSeconds });
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".merchant_webhooks_inbox`);
      expect(rows[0].n).toBe(0);
    },
    async cleanup() {
      await dropSchema(pool, schema);
      await pool.end();
    },
  };
});
