import { Redis } from "ioredis";
import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, ownRedisServer, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";

/**
 * A waiter's job looked up while the queue's Redis does not answer (a CLIENT PAUSE, as during a
 * failover, on a private redis-server) is not a job that is gone: the accepted, in-order notification
 * still runs once, in its turn, and never goes to onStale.
 */
describe("an ordered waiter whose job cannot be looked up", () => {
  const prefix = uniquePrefix("lookup");
  const shared = new Redis(REDIS_URL);
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(shared, prefix);
    shared.disconnect();
  });

  it("runs it once, in order, after the pause (from its job or the ledger's copy), never as stale", async () => {
    const queueRedis = await ownRedisServer();
    cleanup.push(() => queueRedis.stop());
    const pauser = new Redis(queueRedis.url);
    cleanup.push(async () => pauser.disconnect());
    // The store stays on the shared Redis: only the queue's server is paused.
    const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:` });
    cleanup.push(() => store.close());
    const name = "paused";
    const queue = bullmqQueue({ connection: queueRedis.url, name });
    const ordering = { key: (n: SubscriptionNotification) => String(n.resource.id) };
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering });
    cleanup.push(() => receiver.close());

    const bodies = Array.from({ length: 3 }, (_, i) => {
      const body = notification();
      body.resource.id = "sub-paused";
      body.resource.update_time = new Date(Date.parse("2026-02-01T00:00:00Z") + i * 60_000).toISOString();
      return body;
    });
    for (const body of bodies) expect((await receiver.handle(post(body))).status).toBe(200);

    const runs: string[] = [];
    const stale: string[] = [];
    const worker = createWorker({
      connection: queueRedis.url,
      name,
      idempotency: store,
      logger: silentLogger(),
      concurrency: 1,
      sweepQueuedEveryMs: 0,
      onRenew: async (n: SubscriptionNotification) => {
        runs.push(n.id);
        await shared.rpush(`${prefix}effects`, n.id);
        // The first one pauses the queue's Redis: its waiter is then looked up while nothing answers.
        if (runs.length === 1) await pauser.call("CLIENT", "PAUSE", "6000", "ALL");
      },
      onStale: async (n: SubscriptionNotification) => void stale.push(n.id),
    });
    cleanup.push(() => worker.close({ timeoutMs: 2_000 }));

    const ref = (b: Record<string, any>) => ({ id: String(b.id), order: { key: "sub-paused" } });
    await eventually(
      async () => (await Promise.all(bodies.map((b) => store.get(ref(b))))).every((r) => r?.state === "completed"),
      40_000,
      "all three to complete",
    );
    await sleep(500);
    expect(stale).toEqual([]);
    expect(runs).toEqual(bodies.map((b) => b.id));
    const effects = await shared.lrange(`${prefix}effects`, 0, -1);
    expect(effects).toEqual(bodies.map((b) => b.id));
  }, 60_000);
});
