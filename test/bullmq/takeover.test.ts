import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore } from "merchant-webhooks";
import { bullmqQueue, jobIdFor, QueueUnavailableError } from "merchant-webhooks/bullmq";
import { postgresStore } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post } from "../ordering/fixtures/mailbox.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** The stores a take-over is tried on, each made under `prefix` (its own schema for PostgreSQL). */
const STORES: Array<[string, (prefix: string) => { store: IdempotencyStore; close: () => Promise<unknown> }]> = [
  [
    "redisStore",
    (prefix) => {
      const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:`, timeoutMs: 5_000 });
      return { store, close: () => store.close() };
    },
  ],
  [
    "postgresStore",
    () => {
      const pool = testPool();
      const schema = uniqueSchema("takeover");
      beforeAll(() => freshSchema(pool, schema));
      return {
        store: postgresStore({ connection: pool, schema }),
        close: async () => {
          await dropSchema(pool, schema);
          await pool.end();
        },
      };
    },
  ],
];

/**
 * A redelivery that finds its record queued with no job takes the record over and queues it again. If
 * that re-enqueue fails, the sender is answered 503 and retries: the take-over must leave nothing
 * behind, so the retry is accepted at once instead of meeting 409 for a whole lease.
 */
describe.each(STORES)("a take-over of a queued record whose re-enqueue fails, on %s", (_, makeStore) => {
  const prefix = uniquePrefix("takeover");
  const redis = new Redis(REDIS_URL);
  const { store, close } = makeStore(prefix);
  const queue = bullmqQueue({ connection: REDIS_URL, name: "takeover", prefix });
  // The same queue, whose adds are refused (a Redis failing over): the take-over's re-enqueue fails.
  const refusing: typeof queue = Object.assign(Object.create(queue), {
    enqueue: async () => {
      throw new QueueUnavailableError("refused for the test");
    },
  });
  const LEASE_MS = 1_000;
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, leaseMs: LEASE_MS });
  const refused = createReceiver({ logger: silentLogger(), idempotency: store, queue: refusing, leaseMs: LEASE_MS });

  afterAll(async () => {
    await receiver.close();
    await refused.close();
    await queue.close();
    await close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("releases the claim: the sender's next retry is accepted at once", async () => {
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    // The job is lost; once the first receiver's hand-off lease lapses, a redelivery takes the record over.
    await queue.queue.remove(jobIdFor(body.id));
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 100));
    expect((await store.list!({ id: body.id })).items[0]?.state).toBe("queued");
    const failed = await refused.handle(post(body));
    expect(failed.status).toBe(503);
    const retry = await receiver.handle(post(body));
    expect(retry.status).toBe(200);
    expect(retry.answer.message).toBe("accepted for processing");
    expect(await queue.queue.getJobState(jobIdFor(body.id))).toBe("waiting");
  });
});

describe.each(STORES)("a take-over of a queued ordered record whose drain job was lost, on %s", (_, makeStore) => {
  const prefix = uniquePrefix("takeover-ordered");
  const redis = new Redis(REDIS_URL);
  const { store, close } = makeStore(prefix);
  const queue = bullmqQueue({ connection: REDIS_URL, name: "takeover", prefix });
  const refusing: typeof queue = Object.assign(Object.create(queue), {
    enqueue: async () => {
      throw new QueueUnavailableError("refused for the test");
    },
  });
  const LEASE_MS = 1_000;
  const options = { logger: silentLogger(), idempotency: store, leaseMs: LEASE_MS, ordering: true } as const;
  const receiver = createReceiver({ ...options, queue });
  const refused = createReceiver({ ...options, queue: refusing });
  const direct = createReceiver({ ...options, onRenew: async () => {} });

  afterAll(async () => {
    for (const r of [receiver, refused, direct]) await r.close();
    await queue.close();
    await close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  const renewal = (id: string, sub: string, at: string) =>
    buildNotification("SUBSCRIPTION_RENEW", { id, resource: { merchant_id: "M-1", id: sub, update_time: at } });
  const record = async (id: string) => (await store.list!({ id })).items[0];

  it("releases the claim when the re-enqueue fails: the sender's next retry is accepted at once", async () => {
    const body = renewal(`${prefix}a`, `${prefix}SUB-A`, "2026-03-01T00:00:00Z");
    expect((await receiver.handle(post(body))).status).toBe(200);
    await queue.queue.remove(jobIdFor(body.id));
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 100));
    expect((await refused.handle(post(body))).status).toBe(503);
    const retry = await receiver.handle(post(body));
    expect(retry.status).toBe(200);
    expect(retry.answer.message).toBe("accepted for processing");
  });

  it("a stale take-over completes the record it answers 200 stale for", async () => {
    const sub = `${prefix}SUB-B`;
    const older = renewal(`${prefix}b1`, sub, "2026-03-01T00:00:00Z");
    expect((await receiver.handle(post(older))).status).toBe(200);
    await queue.queue.remove(jobIdFor(older.id));
    // A newer one of the subscription completes meanwhile (run by a receiver without a queue).
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 100));
    const newer = renewal(`${prefix}b2`, sub, "2026-03-02T00:00:00Z");
    expect((await direct.handle(post(newer))).status).toBe(200);
    const again = await receiver.handle(post(older));
    expect(again.status).toBe(200);
    expect(again.answer.message).toMatch(/^stale/);
    expect((await record(older.id))?.state).toBe("completed");
  });
});
