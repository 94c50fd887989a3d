import { Redis } from "ioredis";
import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { queueWorkerEnv, spawnWorker } from "../bullmq/fixtures/spawn-worker.js";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, ownRedisServer, sleep } from "../support/redis.js";
import { post, untilQueueEmpty } from "./fixtures/mailbox.js";

const COUNT = 400;
const PAUSE_MS = 10_000;
/** Shorter than the pause: the runner's lease lapses while Redis does not answer. */
const LEASE_MS = 5_000;

/**
 * The queue's Redis (holding the store and every mailbox too, as one Redis does for most merchants)
 * stops answering for 10 s (CLIENT PAUSE, as in a failover) while worker processes run an ordered
 * subscription's mailbox and the sender keeps delivering. On a private redis-server: the shared one
 * is never paused.
 */
describe("an ordered run through a 10 s CLIENT PAUSE of the queue's Redis", () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it("no accepted in-order notification goes to onStale; each runs once, in order", async () => {
    const server = await ownRedisServer();
    cleanup.push(() => server.stop());
    const redis = new Redis(server.url);
    cleanup.push(async () => redis.disconnect());
    const pauser = new Redis(server.url);
    cleanup.push(async () => pauser.disconnect());
    const prefix = "pause";
    const storePrefix = "pause-store:";
    const effects = "pause-effects";
    const name = "paused-mailbox";

    const store = redisStore({ connection: server.url, prefix: storePrefix, timeoutMs: 2_000 });
    cleanup.push(() => store.close());
    const queue = bullmqQueue({ connection: server.url, name, prefix, timeoutMs: 2_000 });
    const stale: string[] = [];
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue,
      ordering: true,
      onStale: async (n) => void stale.push(n.id),
    });
    cleanup.push(() => receiver.close());
    for (let i = 0; i < 2; i++) {
      const child = await spawnWorker({
        ...queueWorkerEnv({ redisUrl: server.url, queue: name, prefix, storePrefix, effects }),
        CONCURRENCY: "20",
        HANDLER_MS: "20",
        LEASE_MS: String(LEASE_MS),
        STALLED_INTERVAL_MS: "1000",
        SWEEP_EVERY_MS: "2000",
      });
      cleanup.push(async () => {
        child.kill("SIGKILL");
        await child.exited;
      });
    }

    const base = Date.UTC(2026, 2, 1, 0, 0, 0);
    const notifications: SubscriptionNotification[] = Array.from({ length: COUNT }, (_, i) =>
      buildNotification("SUBSCRIPTION_RENEW", {
        id: `pause-${i}`,
        resource: { merchant_id: "M-1", id: "SUB-pause", update_time: new Date(base + i * 1000).toISOString() },
      }),
    );
    // The sender: in position order, each delivered again until accepted (a refusal during the pause
    // is a 503 or 409 it retries), a few milliseconds apart so appends go on through the pause.
    let refusals = 0;
    const sending = (async () => {
      for (const body of notifications) {
        for (;;) {
          const response = await receiver.handle(post(body));
          if (response.status === 200) break;
          expect([409, 503], body.id).toContain(response.status);
          refusals += 1;
          await sleep(200);
        }
        await sleep(10);
      }
    })();

    const done = () => redis.lrange(`${effects}:done`, 0, -1);
    await eventually(async () => (await done()).length >= 50, 30_000, "the mailbox running");
    await pauser.call("CLIENT", "PAUSE", String(PAUSE_MS));
    const pausedAt = Date.now();
    await sending;
    await eventually(async () => (await done()).length >= COUNT, 60_000, "every notification run");
    console.info(
      `drained ${Date.now() - pausedAt - PAUSE_MS} ms after the pause ended; ${refusals} deliveries refused and sent again`,
    );

    expect(stale).toEqual([]);
    // In position order, each once: one gone stale at a worker (the fixture has no onStale) would be missing.
    expect(await done()).toEqual(notifications.map((n) => n.id));
    const starts = await Promise.all(
      notifications.map(async (n) => Number(await redis.get(`${effects}:started:${n.id}`))),
    );
    expect(starts.filter((count) => count !== 1)).toEqual([]);
    // A loaded machine may take a while to catch up after the pause: the bound is generous on purpose.
    await untilQueueEmpty(queue, 90_000);
  }, 120_000);
});
