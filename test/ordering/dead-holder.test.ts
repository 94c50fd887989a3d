import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, jobIdFor } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import type { SubscriptionNotification } from "../../src/schema/index.js";
import { buildNotification } from "../../src/testing/build-notification.js";
import { spawnWorker, type WorkerProcess } from "../bullmq/fixtures/spawn-worker.js";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** Short, so the dead holder's claim and its job's lock lapse within the test. */
const LEASE_MS = 1_000;
/**
 * Long, so BullMQ's stalled check does not bring the dead holder's job back first: the drain job that
 * the next delivery queues (the subscription has no live runner) must find the held notification and
 * run it first.
 */
const STALLED_INTERVAL_MS = 15_000;

describe("a worker killed while it holds a subscription", () => {
  const prefix = uniquePrefix("dead-holder");
  const storePrefix = `${prefix}store:`;
  const effects = `${prefix}effects`;
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "dead-holder", prefix });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
  const children: WorkerProcess[] = [];

  afterAll(async () => {
    for (const child of children) {
      child.kill("SIGKILL");
      await child.exited;
    }
    await receiver.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  const spawn = async (env: Record<string, string> = {}) => {
    const child = await spawnWorker({
      REDIS_URL,
      QUEUE: "dead-holder",
      PREFIX: prefix,
      STORE_PREFIX: storePrefix,
      EFFECTS: effects,
      LEASE_MS: String(LEASE_MS),
      STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS),
      ...env,
    });
    children.push(child);
    return child;
  };
  const count = async (what: "started" | "done", id: string) =>
    Number((await redis.get(`${effects}:${what}:${id}`)) ?? 0);

  it("holds it no longer than its lease: the next delivery queues a drain job that runs the held notification and the rest once each, in order, and the queue ends empty", async () => {
    const run = prefix.replace(/[^A-Za-z0-9-]/g, "");
    const base = Date.UTC(2026, 2, 1, 0, 0, 0);
    const [held, next, later]: SubscriptionNotification[] = [0, 1, 2].map((i) =>
      buildNotification("SUBSCRIPTION_RENEW", {
        id: `WH-${run}-${i}`,
        resource: { merchant_id: "M-1", id: `SUB-${run}`, update_time: new Date(base + i * 1000).toISOString() },
      }),
    );
    const deliver = (body: SubscriptionNotification) =>
      receiver.handle({
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: new TextEncoder().encode(JSON.stringify(body)),
      });

    // The first worker's handler for `held` never returns: the worker holds the subscription until it dies.
    const doomed = await spawn({ HANG_ID: held!.id });
    expect((await deliver(held!)).status).toBe(200);
    await eventually(async () => (await count("started", held!.id)) === 1, 10_000, "the held handler to start");
    expect((await deliver(next!)).status).toBe(200);
    // The next one joins the subscription's mailbox behind the held one, with no job of its own: the
    // job that holds the subscription runs it, and that job dies with the worker.
    await eventually(
      async () => (await store.get({ id: next!.id, order: { key: `M-1:SUB-${run}` } }))?.state === "queued",
      10_000,
      "the next one to wait in the mailbox",
    );
    expect(await queue.queue.getJobState(jobIdFor(next!.id))).toBe("unknown");
    doomed.kill("SIGKILL");
    await doomed.exited;
    const killedAt = performance.now();

    await spawn();
    // Once the dead runner's lease lapsed, the next delivery finds no runner and queues a drain job.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
    expect((await deliver(later!)).status).toBe(200);
    await eventually(async () => (await count("done", later!.id)) === 1, 20_000, "the later notification to run");
    console.log(
      `dead holder: the later notification of the subscription done ${Math.round(performance.now() - killedAt)} ms after the kill (lease ${LEASE_MS} ms)`,
    );
    // The held one ran again (its first run died with the process), before the newer one, never as stale.
    expect(await redis.lrange(`${effects}:done`, 0, -1)).toEqual([held!.id, next!.id, later!.id]);
    for (const body of [held!, next!, later!])
      expect((await store.get({ id: body.id, order: { key: `M-1:SUB-${run}` } }))?.state).toBe("completed");
    await eventually(
      async () => (await queue.queue.getJobCountByTypes("waiting", "delayed", "active")) === 0,
      10_000,
      "the queue to empty",
    );
  }, 60_000);
});
