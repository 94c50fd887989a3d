import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, memoryStore, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const MAX = 3;
const logger = silentLogger();

describe("a subscription's mailbox at its maximum length", () => {
  const prefix = uniquePrefix("mailbox-full");
  const redis = new Redis(REDIS_URL);
  const cleanup: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  const cases: Array<[string, () => IdempotencyStore]> = [
    [
      "redisStore",
      () => redisStore({ connection: REDIS_URL, prefix: `${prefix}redis:`, mailboxMaxLength: MAX, timeoutMs: 5_000 }),
    ],
    ["memoryStore", () => memoryStore({ mailboxMaxLength: MAX })],
  ];

  it.each(cases)(
    "%s: one more is answered 503 with Retry-After and not kept; accepted once the mailbox drains",
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
      const deliver = (body: SubscriptionNotification) =>
        receiver.handle({
          method: "POST",
          headers: { "content-type": "application/json" },
          rawBody: new TextEncoder().encode(JSON.stringify(body)),
        });

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
});
