import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { type Delivery, deliverPast503, deliverUntilSettled } from "./fixtures/deliver.js";
import { type ReceiverProcess, receiverEnv, spawnReceiver } from "./fixtures/spawn-receiver.js";

const NOTIFICATIONS = 200;
const DELIVERIES = 4;
/** Notifications in flight at once (each with its four concurrent deliveries). */
const IN_FLIGHT = 40;

/** Run `task` over `items`, at most `limit` at a time. */
async function inBatches<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
  return results;
}

describe("two receiver processes sharing one Redis", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("two");
  const effects = `${prefix}effects:`;
  let receivers: ReceiverProcess[] = [];

  beforeAll(async () => {
    const env = receiverEnv(REDIS_URL, prefix, 15);
    receivers = await Promise.all([spawnReceiver(env), spawnReceiver(env)]);
  });
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.kill()));
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it(`runs each handler once for ${NOTIFICATIONS} notifications delivered ${DELIVERIES} times concurrently across both`, async () => {
    const batch = Array.from({ length: NOTIFICATIONS }, () => notification());
    const answers: Delivery[][][] = await inBatches(batch, IN_FLIGHT, (renewal) =>
      Promise.all(Array.from({ length: DELIVERIES }, (_, i) => deliverUntilSettled(receivers[i % 2]!.url, renewal))),
    );

    // Every delivery ends answered 200 processed: true (after the retries a sender makes on 409, or on
    // 503 should a store call overrun its limit on a saturated machine); exactly one ran the handler.
    const finals = answers.flat().map((tries) => tries.at(-1)!);
    expect(finals.filter((answer) => answer.status === 200 && answer.body.processed)).toHaveLength(
      NOTIFICATIONS * DELIVERIES,
    );
    expect(finals.filter((answer) => answer.body.message === "processed")).toHaveLength(NOTIFICATIONS);
    // The deliveries did overlap: some met another's live claim and were told to come back.
    const busy = answers.flat(2).filter((answer) => answer.status === 409);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((answer) => Number(answer.retryAfter) >= 1)).toBe(true);

    const started = await redis.mget(batch.map((renewal) => `${effects}started:${renewal.id}`));
    const done = await redis.mget(batch.map((renewal) => `${effects}done:${renewal.id}`));
    expect(started.every((count) => count === "1")).toBe(true);
    expect(done.every((count) => count === "1")).toBe(true);
    // Both processes did part of the work.
    const byProcess = await redis.hgetall(`${effects}by`);
    expect(Object.keys(byProcess).sort()).toEqual(receivers.map((receiver) => String(receiver.pid)).sort());
    expect(Object.values(byProcess).reduce((sum, count) => sum + Number(count), 0)).toBe(NOTIFICATIONS);

    // The store holds one completed record per notification, claimed once. The one exception: a claim
    // whose store call overran its limit (answered 503 on a saturated machine) is abandoned, so the
    // next delivery's claim is a second attempt; the handler still ran once (checked above).
    const states = await Promise.all(
      batch.map((renewal) => redis.hmget(`${prefix}idem:${renewal.id}`, "state", "attempts")),
    );
    const metStoreTimeout = new Set(
      batch.filter((_, i) => answers[i]!.flat().some((answer) => answer.status === 503)).map((renewal) => renewal.id),
    );
    expect(states.filter(([state]) => state !== "completed")).toEqual([]);
    expect(
      batch
        .filter((renewal, i) => states[i]![1] !== "1" && !metStoreTimeout.has(renewal.id))
        .map((renewal) => [renewal.id, states[batch.indexOf(renewal)]![1]]),
    ).toEqual([]);
  });

  it("answers 422 in one process to an id completed in the other with a different payload", async () => {
    const [first, second] = receivers;
    const renewal = notification();
    expect((await deliverPast503(first!.url, renewal)).status).toBe(200);
    const altered = { ...renewal, resource: { ...renewal.resource, id: "a-different-subscription" } };
    const conflict = await deliverPast503(second!.url, altered);
    expect(conflict.status).toBe(422);
    expect(conflict.body.processed).toBe(false);
    expect(await redis.get(`${effects}done:${renewal.id}`)).toBe("1");
  });
});
