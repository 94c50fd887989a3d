import { Redis } from "ioredis";
import { createReceiver, type Receiver } from "merchant-webhooks";
import { bullmqQueue, createWorker, type NotificationWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import type { SubscriptionNotification } from "merchant-webhooks/schema";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { untilQueueEmpty } from "./fixtures/mailbox.js";
import { expectEachSubscriptionInOrder, readCalls, recordingHandlers } from "./fixtures/recorded-calls.js";

const COUNT = 1_000;
const SENDERS = 20;

/** `COUNT` renewals of one subscription, one second apart, in position order. */
function hotSubscription(run: string): SubscriptionNotification[] {
  const base = Date.UTC(2026, 2, 1, 0, 0, 0);
  return Array.from({ length: COUNT }, (_, i) =>
    buildNotification("SUBSCRIPTION_RENEW", {
      id: `WH-${run}-${i}`,
      resource: { merchant_id: "M-1", id: `SUB-${run}`, update_time: new Date(base + i * 1000).toISOString() },
    }),
  );
}

const post = (body: SubscriptionNotification) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(JSON.stringify(body)),
});

/**
 * Deliver in position order, `senders` at a time (each sender takes the next notification once its
 * previous one is acknowledged), retrying 409 and 503 as a sender would. Returns how many 409s it met,
 * and the ids that were refused at least once (503: not accepted, so newer ones may run before them).
 */
async function sendInOrder(receiver: Receiver, notifications: SubscriptionNotification[], senders: number) {
  let next = 0;
  let conflicts = 0;
  const refused = new Set<string>();
  const sender = async () => {
    while (next < notifications.length) {
      const body = notifications[next++]!;
      for (;;) {
        const response = await receiver.handle(post(body));
        if (response.status === 200) break;
        if (response.status !== 409 && response.status !== 503) throw new Error(`unexpected ${response.status}`);
        conflicts += response.status === 409 ? 1 : 0;
        if (response.status === 503) refused.add(body.id);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  await Promise.all(Array.from({ length: senders }, sender));
  return { conflicts, refused };
}

describe("one hot subscription drained in order", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("hot-drain");
  const effects = `${prefix}effects:`;
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
  const closing: Array<{ close(): Promise<unknown> }> = [];

  afterAll(async () => {
    for (const item of closing.reverse()) await item.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it(`runs ${COUNT} notifications of one subscription, sent in order, through a queue with two workers: none accepted is stale, none left`, async () => {
    const queue = bullmqQueue({ connection: REDIS_URL, name: "hot", prefix });
    closing.push(queue);
    const handlers = recordingHandlers(redis, effects);
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const workers: NotificationWorker[] = [0, 1].map(() =>
      createWorker({
        connection: REDIS_URL,
        name: "hot",
        prefix,
        idempotency: store,
        logger: silentLogger(),
        concurrency: 20,
        ...handlers,
      }),
    );
    closing.push(...workers.map((worker) => ({ close: () => worker.close({ timeoutMs: 5_000 }) })));
    await Promise.all(workers.map((worker) => worker.waitUntilReady()));

    const notifications = hotSubscription(`${prefix}q`);
    const { conflicts, refused } = await sendInOrder(receiver, notifications, SENDERS);
    // Accepted into the queue, never turned away because the subscription was busy.
    expect(conflicts).toBe(0);
    const subscription = notifications[0]!.resource.id!;
    await eventually(
      async () => (await readCalls(redis, effects, subscription)).length >= COUNT,
      120_000,
      "every notification run",
    );
    await expectEachSubscriptionInOrder(redis, effects, notifications);
    // None accepted is stale; only one turned away (503, the store timing out on a loaded machine) and
    // sent again after newer ones had run may be, since it arrived after them.
    const stale = (await readCalls(redis, effects, subscription)).filter((call) => call.kind === "stale");
    expect(stale.filter((call) => !refused.has(call.id))).toEqual([]);
    // The queue ends empty: the jobs the subscription's holder ran for others are gone too.
    await untilQueueEmpty(queue, 60_000);
    const records = await Promise.all(
      notifications.map((n) => store.get({ id: n.id, order: { key: `M-1:${encodeURIComponent(n.resource.id!)}` } })),
    );
    expect(records.filter((record) => record?.state !== "completed")).toEqual([]);
    await receiver.close?.();
  }, 300_000);

  it(`runs ${COUNT} notifications of one subscription, sent in order, in-process: none stale`, async () => {
    const handlers = recordingHandlers(redis, `${effects}direct:`);
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, ordering: true, ...handlers });
    const notifications = hotSubscription(`${prefix}d`);
    await sendInOrder(receiver, notifications, 1);
    const { stale } = await expectEachSubscriptionInOrder(redis, `${effects}direct:`, notifications);
    expect(stale).toBe(0);
    await receiver.close?.();
  }, 300_000);
});
