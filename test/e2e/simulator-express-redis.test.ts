import { Redis } from "ioredis";
import { redisStore } from "merchant-webhooks/redis";
import {
  createPlatformSimulator,
  type DeliveryRecord,
  type PlatformSimulator,
  type SimulatedSubscription,
} from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { freePort, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { type ExampleProcess, startExample } from "./example-process.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SUBSCRIPTIONS = 250;
/** Each subscription's lifecycle: 4 notifications, 1,000 in all. */
const LIFECYCLE = ["renew", "suspend", "resume"] as const;
const NOTIFICATIONS = SUBSCRIPTIONS * (1 + LIFECYCLE.length);
/** A short lease, so a claim held by the killed process is taken over within the (scaled) schedule. */
const LEASE_MS = 1_000;
const MERCHANT_ID = "M-E2E";

/**
 * The platform simulator in front of examples/express on redisStore: 1,000 notifications with 10 %
 * duplicated, 20 % held back so later ones overtake them, every retry re-serialised, and the receiver
 * killed (SIGKILL) and started again halfway through. The default retry schedule runs 1,000 times
 * faster (5 min becomes 300 ms).
 *
 * With `{ ordering: true }` the example runs with `ordering` (WEBHOOK_ORDERING=1): each subscription's
 * handlers must then run in `resource.update_time` order, which the simulator makes strictly increasing
 * in the order it sends a subscription's notifications, and the overtaken ones go to `onStale`.
 */
async function runEndToEnd({ ordering }: { ordering: boolean }) {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("e2e-sim");
  const port = await freePort();
  const handlerRuns: string[] = [];
  const env = {
    WEBHOOK_REDIS_URL: REDIS_URL,
    WEBHOOK_REDIS_PREFIX: prefix,
    WEBHOOK_LEASE_MS: String(LEASE_MS),
    WEBHOOK_SECRET: SECRET,
    ...(ordering ? { WEBHOOK_ORDERING: "1" } : {}),
  };
  let receiver: ExampleProcess = await startExample(port, env, handlerRuns);
  const sim: PlatformSimulator = createPlatformSimulator({
    webhookUrl: `http://127.0.0.1:${port}/webhooks/subscriptions`,
    secret: SECRET,
    timeScale: 0.001,
    attemptTimeoutMs: 5_000,
    seed: 20261123,
    chaos: { duplicateRate: 0.1, reorderWindowMs: 300_000, reorderRate: 0.2, reserializeRetries: true },
  });
  try {
    const started = performance.now();
    const subscriptions: SimulatedSubscription[] = [];
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      subscriptions.push(
        await sim.subscriptions.create({
          merchant_id: MERCHANT_ID,
          subscriber: { id: `U-${i}` },
          product: { id: "P-E2E" },
        }),
      );
    }
    let sent = SUBSCRIPTIONS;
    let restarted = false;
    for (const step of LIFECYCLE) {
      for (const subscription of subscriptions) {
        await subscription[step]();
        sent++;
        if (sent % 50 === 0) await sleep(20); // spread the sending over time, as traffic is
        if (!restarted && sent >= NOTIFICATIONS / 2) {
          restarted = true;
          // Kill the receiver with deliveries in flight, and start it again on the same port.
          await receiver.kill();
          receiver = await startExample(port, env, handlerRuns);
        }
      }
    }
    await sim.settled();
    const elapsedMs = performance.now() - started;

    const deliveries = sim.deliveries();
    const store = redisStore({ connection: REDIS_URL, prefix });
    // With ordering, a record lives under its subscription's key (merchant id : subscription id).
    const orderKeyOf = (delivery: DeliveryRecord) =>
      ordering ? { key: `${MERCHANT_ID}:${encodeURIComponent(delivery.subscription_id ?? "")}` } : undefined;
    const firstDeliveries = [...new Map(deliveries.map((delivery) => [delivery.id, delivery])).values()];
    const records = await Promise.all(
      firstDeliveries.map((delivery) => store.get({ id: delivery.id, order: orderKeyOf(delivery) })),
    );
    await store.close();
    return { deliveries, handlerRuns, records, elapsedMs, undelivered: sim.undelivered() };
  } finally {
    await sim.close();
    await receiver.stop();
    await removeKeys(redis, prefix);
    redis.disconnect();
  }
}

/** Ids with an attempt that got no answer: their handler may have run in the killed process. */
const unansweredIds = (deliveries: readonly DeliveryRecord[]) =>
  new Set(
    deliveries
      .filter((delivery) => delivery.attempts.some((attempt) => attempt.status === 0))
      .map((delivery) => delivery.id),
  );

describe("end to end: the platform simulator and examples/express on redisStore", () => {
  it("processes each of 1,000 chaotic notifications once across a receiver crash, leaving nothing undelivered", async () => {
    const result = await runEndToEnd({ ordering: false });
    const { deliveries, handlerRuns, records, undelivered } = result;

    const ids = new Set(deliveries.map((delivery) => delivery.id));
    expect(ids.size).toBe(NOTIFICATIONS);
    // The chaos happened: duplicates, held-back notifications, re-serialised retries after failures.
    const duplicates = deliveries.filter((delivery) => delivery.duplicate).length;
    const held = deliveries.filter((delivery) => !delivery.duplicate && delivery.held).length;
    const retried = deliveries.filter((delivery) => delivery.attempts.length > 1).length;
    expect(duplicates).toBeGreaterThan(NOTIFICATIONS * 0.07);
    expect(duplicates).toBeLessThan(NOTIFICATIONS * 0.13);
    expect(held).toBeGreaterThan(NOTIFICATIONS * 0.16);
    expect(held).toBeLessThan(NOTIFICATIONS * 0.24);
    expect(retried).toBeGreaterThan(0);
    const unanswered = unansweredIds(deliveries);
    expect(unanswered.size).toBeGreaterThan(0); // the crash was felt

    // Nothing left undelivered, and every notification completed in Redis.
    expect(undelivered).toEqual({ exhausted: [], pending: [] });
    expect(records.every((record) => record?.state === "completed")).toBe(true);

    // The sender never saw two "processed" answers for one id: every other answer was a duplicate's.
    const processedAnswers = new Map<string, number>();
    for (const delivery of deliveries) {
      for (const attempt of delivery.attempts)
        if (attempt.processed && attempt.message === "processed")
          processedAnswers.set(delivery.id, (processedAnswers.get(delivery.id) ?? 0) + 1);
    }
    expect([...processedAnswers.values()].filter((count) => count > 1)).toEqual([]);

    // Every notification's handler ran; more than once only where the killed process may have run it
    // before it died (an attempt with no answer), the one case at-least-once delivery allows.
    const runs = new Map<string, number>();
    for (const id of handlerRuns) runs.set(id, (runs.get(id) ?? 0) + 1);
    expect([...ids].filter((id) => !runs.has(id))).toEqual([]);
    const rerun = [...runs].filter(([, count]) => count > 1).map(([id]) => id);
    expect(rerun.filter((id) => !unanswered.has(id))).toEqual([]);

    console.info(
      `e2e: ${NOTIFICATIONS} notifications, ${duplicates} duplicates, ${held} held back, ${retried} deliveries retried, ` +
        `${deliveries.reduce((sum, delivery) => sum + delivery.attempts.length, 0)} attempts, ${unanswered.size} unanswered at the crash, ` +
        `${rerun.length} handlers re-run after it, ${Math.round(result.elapsedMs)} ms`,
    );
  }, 180_000);

  it("with ordering: each subscription's handlers run in position order, overtaken notifications go to onStale, none lost", async () => {
    const { deliveries, handlerRuns, records, undelivered } = await runEndToEnd({ ordering: true });
    expect(undelivered).toEqual({ exhausted: [], pending: [] });
    expect(records.every((record) => record?.state === "completed")).toBe(true);

    // Each id's place in its subscription's history: the order the simulator sent them in.
    const place = new Map<string, { subscription: string; index: number }>();
    const sentPerSubscription = new Map<string, number>();
    for (const delivery of deliveries) {
      if (place.has(delivery.id)) continue;
      const subscription = delivery.subscription_id ?? "";
      const index = sentPerSubscription.get(subscription) ?? 0;
      sentPerSubscription.set(subscription, index + 1);
      place.set(delivery.id, { subscription, index });
    }
    const applied = handlerRuns.filter((run) => !run.startsWith("stale:"));
    const stale = new Set(
      handlerRuns.filter((run) => run.startsWith("stale:")).map((run) => run.slice("stale:".length)),
    );

    // Every notification was applied or went to onStale; the reordering made some stale.
    expect([...place.keys()].filter((id) => !applied.includes(id) && !stale.has(id))).toEqual([]);
    expect(stale.size).toBeGreaterThan(0);
    // No stale notification was applied after a newer one of its subscription: per subscription, the
    // applied handler runs go forward (a run repeated after the crash, before anything newer, aside).
    const lastApplied = new Map<string, number>();
    const backwards: string[] = [];
    for (const id of applied) {
      const { subscription, index } = place.get(id)!;
      const last = lastApplied.get(subscription) ?? -1;
      if (index < last) backwards.push(id);
      lastApplied.set(subscription, Math.max(last, index));
    }
    expect(backwards).toEqual([]);
    console.info(`e2e with ordering: ${place.size} notifications, ${applied.length} handler runs, ${stale.size} stale`);
  }, 180_000);
});
