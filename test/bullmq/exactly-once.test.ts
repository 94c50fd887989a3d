import { Redis } from "ioredis";
import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { spawnWorker, type WorkerProcess } from "./fixtures/spawn-worker.js";

const COUNT = 1_000;
const IN_FLIGHT = 50;

describe("a receiver and two workers on one Redis", () => {
  const prefix = uniquePrefix("once");
  const effects = `${prefix}-effects`;
  const storePrefix = `${prefix}-store:`;
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "once", prefix });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
  const local = createWorker({
    connection: REDIS_URL,
    name: "once",
    prefix,
    idempotency: store,
    logger: silentLogger(),
    concurrency: 20,
    onRenew: async (n) => {
      await redis.multi().incr(`${effects}:done:${n.id}`).hincrby(`${effects}:by`, "local", 1).exec();
    },
  });
  let remote: WorkerProcess | undefined;

  afterAll(async () => {
    remote?.kill("SIGKILL");
    await remote?.exited;
    await local.close({ timeoutMs: 5_000 });
    await receiver.close();
    await store.close?.();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it(`runs each of ${COUNT} notifications delivered twice exactly once, and acknowledges every delivery`, async () => {
    remote = await spawnWorker({
      REDIS_URL,
      QUEUE: "once",
      PREFIX: prefix,
      STORE_PREFIX: storePrefix,
      EFFECTS: effects,
      CONCURRENCY: "20",
    });
    const bodies = Array.from({ length: COUNT }, () => notification() as SubscriptionNotification);
    // Every notification twice, in an order that puts some duplicates side by side and some far apart.
    const deliveries = [...bodies, ...bodies]
      .map((body, i) => ({ body, key: (i * 7919) % (2 * COUNT) }))
      .sort((a, b) => a.key - b.key);

    const finalAnswers: Array<{ status: number; processed: boolean }> = [];
    // Deliver as the platform does: what is not acknowledged (409 while another delivery holds the id,
    // 503 if Redis is briefly too slow for the receiver's time limits) is sent again.
    async function deliver(body: SubscriptionNotification) {
      for (let tries = 1; ; tries++) {
        const response = await receiver.handle({
          method: "POST",
          headers: { "content-type": "application/json" },
          rawBody: json(body),
        });
        if ((response.status === 409 || response.status === 503) && tries < 100) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        finalAnswers.push({ status: response.status, processed: JSON.parse(response.body).processed });
        return;
      }
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < deliveries.length) await deliver(deliveries[next++]!.body);
      }),
    );

    expect(finalAnswers).toHaveLength(2 * COUNT);
    expect(finalAnswers.filter((a) => a.status !== 200 || !a.processed)).toEqual([]);

    const handled = async () => (await redis.hvals(`${effects}:by`)).reduce((sum, n) => sum + Number(n), 0);
    await eventually(async () => (await handled()) >= COUNT, 60_000, "every handler to run");
    // Settle: a handler that ran twice would show up as a second effect in this time.
    await new Promise((resolve) => setTimeout(resolve, 300));

    const counts = await redis.mget(bodies.map((b) => `${effects}:done:${b.id}`));
    const notOnce = bodies.flatMap((b, i) => (counts[i] === "1" ? [] : [`${b.id} ran ${counts[i] ?? 0} times`]));
    expect(notOnce).toEqual([]);
    const records = await Promise.all(bodies.map((b) => store.get(b.id)));
    expect(records.filter((r) => r?.state !== "completed")).toEqual([]);
    expect(await queue.queue.getJobCounts("waiting", "active", "delayed", "failed")).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 0,
    });
    // Both workers took part: the exactly-once result is not one worker doing everything.
    const by = await redis.hgetall(`${effects}:by`);
    expect(Object.keys(by)).toHaveLength(2);
    expect(Object.values(by).every((n) => Number(n) > 0)).toBe(true);
    expect(Object.values(by).reduce((sum, n) => sum + Number(n), 0)).toBe(COUNT);
  });
});
