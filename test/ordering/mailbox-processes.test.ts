import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { backlog, sendAll, untilQueueEmpty, workerProcesses } from "./fixtures/mailbox.js";

/** Short leases, stalled checks and sweeps, so a dead runner's mailbox is taken up again in seconds. */
const LEASE_MS = 2_000;
const STALLED_INTERVAL_MS = 500;
const SWEEP_EVERY_MS = 2_000;
/** The sweep takes copies of this age or more (`sweepQueued`'s default). */
const SWEEP_MIN_AGE_MS = 10_000;

describe("an ordered subscription's mailbox, run by worker processes", () => {
  const prefix = uniquePrefix("mailbox");
  const storePrefix = `${prefix}-store:`;
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix, timeoutMs: 5_000 });
  const cleanup: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  function setup(name: string) {
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    cleanup.push(() => receiver.close());
    const { spawn, done, started } = workerProcesses({
      redis,
      name,
      prefix,
      storePrefix,
      concurrency: 20,
      cleanup,
    });
    return { queue, receiver, spawn, done, started };
  }

  it("drains 1,000 of one subscription through two worker processes from one drain job: each once, in order", async () => {
    const { queue, receiver, spawn, done, started } = setup("drain");
    const notifications = backlog(`${prefix}-drain`, 1_000);
    await sendAll(receiver, notifications);
    // One job for the subscription, not one per notification (another only if sending outlasted a lease).
    const queued = await queue.queue.getJobCounts("waiting", "delayed", "active");
    expect(Object.values(queued).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3);
    await Promise.all([spawn(), spawn()]);
    await eventually(async () => (await done()).length >= notifications.length, 120_000, "every notification run");
    // In position order, each once: a stale one (worker-process has no onStale) would be missing.
    expect(await done()).toEqual(notifications.map((n) => n.id));
    const starts = await Promise.all(notifications.map((n) => started(n.id)));
    expect(starts.filter((count) => count !== 1)).toEqual([]);
    await untilQueueEmpty(queue);
  }, 180_000);

  it("a runner killed with SIGKILL mid-mailbox: the rest runs once, in order, within a lease and a sweep", async () => {
    const { receiver, spawn, done, started } = setup("killed");
    const notifications = backlog(`${prefix}-killed`, 200);
    await sendAll(receiver, notifications);
    const env = {
      LEASE_MS: String(LEASE_MS),
      STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS),
      SWEEP_EVERY_MS: String(SWEEP_EVERY_MS),
      HANDLER_MS: "20",
    };
    const runner = await spawn(env);
    await eventually(async () => (await done()).length >= 50, 60_000, "the runner halfway");
    runner.kill("SIGKILL");
    await runner.exited;
    const killedAt = Date.now();
    const ranBeforeKill = (await done()).length;
    expect(ranBeforeKill).toBeLessThan(notifications.length);
    await spawn(env);
    await eventually(async () => (await done()).length > ranBeforeKill, 60_000, "the mailbox taken up again");
    const resumedAfterMs = Date.now() - killedAt;
    await eventually(async () => (await done()).length >= notifications.length, 60_000, "the rest run");
    console.info(`mailbox taken up again ${resumedAfterMs} ms after the kill (lease ${LEASE_MS} ms)`);
    // The dead runner's lease lapses, and the next sweep queues one drain job for the subscription
    // (its job came back from the stalled check while the lease still held, and found nothing to take).
    // A sweep takes copies of 10 s or more: the bound is that age, a lease and a sweep, with room for
    // a worker process starting on a loaded machine.
    expect(resumedAfterMs).toBeLessThan(SWEEP_MIN_AGE_MS + LEASE_MS + SWEEP_EVERY_MS + 10_000);
    expect(await done()).toEqual(notifications.map((n) => n.id));
    // Only the one whose handler the kill cut short started twice; its effect was recorded once.
    const starts = await Promise.all(notifications.map((n) => started(n.id)));
    expect(starts.filter((count) => count === 0 || count > 2)).toEqual([]);
    expect(starts.filter((count) => count === 2).length).toBeLessThanOrEqual(1);
  }, 180_000);
});
