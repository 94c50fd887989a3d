import { Redis } from "ioredis";
import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { QueueUnavailableError } from "../../src/bullmq/bullmq-queue.js";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { mailboxStores, post } from "./fixtures/mailbox.js";

const MAX = 3;
/** Long enough that a runner flag left standing would hold the mailbox well past the wait below. */
const LEASE = 30_000;
const logger = silentLogger();

describe("an append a subscription's mailbox refuses (503)", () => {
  const prefix = uniquePrefix("mailbox-full");
  const redis = new Redis(REDIS_URL);
  const cleanup: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it.each(mailboxStores(prefix, { laneMaxLength: MAX }))(
    "%s: at its maximum length, one more is answered 503 with Retry-After and not kept; accepted once the mailbox drains",
    async (label, makeStore) => {
      const store = makeStore();
      cleanup.push(async () => store.close?.());
      const name = `full-${label}`;
      const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
      const receiver = createReceiver({ logger, idempotency: store, queue, ordering: true });
      cleanup.push(() => receiver.close());
      const base = Date.UTC(2026, 2, 1, 0, 0, 0);
      const bodies: SubscriptionNotification[] = Array.from({ length: MAX + 1 }, (_, i) =>
        buildNotification("SUBSCRIPTION_RENEW", {
          id: `${name}-${i}`,
          resource: { merchant_id: "M-1", id: `SUB-${name}`, update_time: new Date(base + i * 1000).toISOString() },
        }),
      );
      const deliver = (body: SubscriptionNotification) => receiver.handle(post(body));

      for (const body of bodies.slice(0, MAX)) expect((await deliver(body)).status).toBe(200);
      const refused = await deliver(bodies[MAX]!);
      expect(refused.status).toBe(503);
      expect(JSON.parse(String(refused.body))).toMatchObject({ processed: false });
      expect(Number(refused.headers?.["retry-after"])).toBeGreaterThan(0);
      const key = { id: bodies[MAX]!.id, order: { key: `M-1:SUB-${name}` } };
      expect(await store.get(key)).toBeUndefined();
      // A redelivery of one already in the mailbox is still a duplicate, not refused.
      expect((await deliver(bodies[0]!)).status).toBe(200);

      const ran: string[] = [];
      const onRenew = async (n: SubscriptionNotification) => void ran.push(n.id);
      const worker = createWorker({ connection: REDIS_URL, name, prefix, idempotency: store, logger, onRenew });
      cleanup.push(() => worker.close({ timeoutMs: 2_000 }));
      await eventually(() => ran.length >= MAX, 30_000, "the mailbox to drain");
      expect((await deliver(bodies[MAX]!)).status).toBe(200);
      await eventually(() => ran.length >= MAX + 1, 30_000, "the refused one, sent again, to run");
      expect(ran).toEqual(bodies.map((b) => b.id));
    },
    60_000,
  );

  it.each(mailboxStores(`${prefix}wake:`, { leaseMs: LEASE }))(
    "%s: a drain job the queue refuses to add is answered 503, and the retry wakes a runner at once; each runs once, in order",
    async (label, makeStore) => {
      const store = makeStore();
      cleanup.push(async () => store.close?.());
      const name = `wake-refused-${label}`;
      const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
      let wakes = 0;
      // The queue's Redis refuses the first drain job only (a blip), as a timed-out add does.
      const failingOnce = {
        ...queue,
        wake: async (item: Parameters<NonNullable<typeof queue.wake>>[0]) => {
          wakes += 1;
          if (wakes === 1) throw new QueueUnavailableError("enqueue did not finish within 5000 ms");
          return queue.wake!(item);
        },
      };
      const receiver = createReceiver({
        logger,
        idempotency: store,
        queue: failingOnce,
        ordering: true,
        leaseMs: LEASE,
      });
      cleanup.push(() => receiver.close());
      const ran: string[] = [];
      const onRenew = async (n: SubscriptionNotification) => void ran.push(n.id);
      // No sweep: only a drain job queued by an append can run the mailbox here.
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger,
        onRenew,
        sweepQueuedEveryMs: 0,
      });
      cleanup.push(() => worker.close({ timeoutMs: 2_000 }));

      const base = Date.UTC(2026, 2, 1, 0, 0, 0);
      const bodies: SubscriptionNotification[] = Array.from({ length: 3 }, (_, i) =>
        buildNotification("SUBSCRIPTION_RENEW", {
          id: `${name}-${i}`,
          resource: { merchant_id: "M-1", id: `SUB-${name}`, update_time: new Date(base + i * 1000).toISOString() },
        }),
      );
      const deliver = (body: SubscriptionNotification) => receiver.handle(post(body));

      const refused = await deliver(bodies[0]!);
      expect(refused.status).toBe(503);
      expect(JSON.parse(String(refused.body))).toMatchObject({ processed: false });
      expect(await store.get({ id: bodies[0]!.id, order: { key: `M-1:SUB-${name}` } })).toBeUndefined();

      // The sender's retry, then the next two: the first wakes a runner (the refused one's flag is gone).
      for (const body of bodies) expect((await deliver(body)).status).toBe(200);
      await eventually(() => ran.length >= bodies.length, 10_000, "the mailbox to run well within a lease");
      // The refused wake, then at least the retry's (a runner that found its mailbox empty wakes anew).
      expect(wakes).toBeGreaterThanOrEqual(2);
      // Nothing more arrives: no notification ran twice.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(ran).toEqual(bodies.map((b) => b.id));
    },
    60_000,
  );
});
