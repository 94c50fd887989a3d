import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import type { ReceiverProcess } from "../redis/fixtures/spawn-receiver.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { expectEachSubscriptionInOrder } from "./fixtures/recorded-calls.js";
import { sendShuffled, spawnOrderedReceivers } from "./fixtures/send-shuffled.js";
import { subscriptionHistories } from "./fixtures/subscription-histories.js";

const SUBSCRIPTIONS = 100;

describe("ordering across two receiver processes on one Redis", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("ordering-two");
  const effects = `${prefix}effects:`;
  let receivers: ReceiverProcess[] = [];

  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.kill()));
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it(`applies each of ${SUBSCRIPTIONS} subscriptions' 5 events in order, delivered shuffled with duplicates`, async () => {
    const env = { STORE_URL: REDIS_URL, STORE_PREFIX: `${prefix}idem:`, EFFECTS: effects, HANDLER_MS: "5" };
    receivers = await spawnOrderedReceivers(env);
    const notifications = subscriptionHistories(prefix, SUBSCRIPTIONS);
    const report = await sendShuffled(receivers, notifications, 12);

    // Nothing lost: every delivery ended acknowledged, and nothing was acknowledged untruthfully.
    expect(report.acknowledged.size).toBe(notifications.length);
    expect(report.inconsistent).toEqual([]);
    // The receivers did serialise: deliveries met another of their subscription in progress.
    expect(report.answers["409"] ?? 0).toBeGreaterThan(0);
    const { stale } = await expectEachSubscriptionInOrder(redis, effects, notifications);
    expect(stale).toBeGreaterThan(0);
    expect(Object.keys(report.acknowledgedAs).some((message) => message.startsWith("stale: "))).toBe(true);
  }, 300_000);
});
