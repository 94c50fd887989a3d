import { Redis } from "ioredis";
import { createWorker, type NotificationWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import type { ReceiverProcess } from "../redis/fixtures/spawn-receiver.js";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { expectEachSubscriptionInOrder, readCalls, recordingHandlers } from "./fixtures/recorded-calls.js";
import { sendShuffled, spawnOrderedReceivers } from "./fixtures/send-shuffled.js";
import { subscriptionHistories } from "./fixtures/subscription-histories.js";

const SUBSCRIPTIONS = 100;

describe("ordering through a BullMQ queue with two workers", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("ordering-queue");
  const effects = `${prefix}effects:`;
  const storePrefix = `${prefix}idem:`;
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
  let receivers: ReceiverProcess[] = [];
  let workers: NotificationWorker[] = [];

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.kill()));
    await Promise.all(workers.map((worker) => worker.close({ timeoutMs: 5_000 })));
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it(`runs each of ${SUBSCRIPTIONS} subscriptions' 5 events in order in the workers, stale ones to onStale (at the receiver or the worker)`, async () => {
    const env = {
      STORE_URL: REDIS_URL,
      STORE_PREFIX: storePrefix,
      EFFECTS: effects,
      QUEUE: "ordered",
      QUEUE_PREFIX: prefix,
    };
    receivers = await spawnOrderedReceivers(env);
    workers = [0, 1].map(() =>
      createWorker({
        connection: REDIS_URL,
        name: "ordered",
        prefix,
        idempotency: store,
        logger: silentLogger(),
        concurrency: 8,
        ...recordingHandlers(redis, effects, 5),
      }),
    );
    await Promise.all(workers.map((worker) => worker.waitUntilReady()));

    const notifications = subscriptionHistories(prefix, SUBSCRIPTIONS);
    const report = await sendShuffled(receivers, notifications, 34);
    expect(report.acknowledged.size).toBe(notifications.length);
    expect(report.inconsistent).toEqual([]);

    // Acknowledged at enqueue: wait until every notification has been run by a worker (or a receiver's onStale).
    const subscriptions = [...new Set(notifications.map((n) => n.resource.id!))];
    await eventually(
      async () =>
        (await Promise.all(subscriptions.map((s) => readCalls(redis, effects, s)))).flat().length >=
        notifications.length,
      60_000,
      "every notification run",
    );
    const { stale } = await expectEachSubscriptionInOrder(redis, effects, notifications);
    expect(stale).toBeGreaterThan(0);
  }, 300_000);
});
