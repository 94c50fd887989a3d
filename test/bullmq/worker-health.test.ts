import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, ownRedisServer, uniquePrefix } from "../support/redis.js";

/**
 * `worker.health()` on a redis-server of the test's own (frozen with SIGSTOP, killed and started again),
 * never the shared one: ok only while its Redis answers and the worker takes jobs.
 */
describe("createWorker's health()", () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => {});
  });

  it("is ok and counts a running job; not ok while Redis is frozen or down, ok again after; not ok once closed", async () => {
    const redis = await ownRedisServer();
    cleanup.push(() => redis.stop());
    const prefix = uniquePrefix("health");
    const store = redisStore({ connection: redis.url, prefix });
    cleanup.push(async () => store.close?.());
    const queue = bullmqQueue({ connection: redis.url, name: "health" });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    cleanup.push(() => receiver.close());
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const worker = createWorker({
      connection: redis.url,
      name: "health",
      idempotency: store,
      logger: silentLogger(),
      concurrency: 3,
      sweepQueuedEveryMs: 0,
      onRenew: () => held,
    });
    cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
    await worker.waitUntilReady();

    expect(await worker.health()).toMatchObject({
      ok: true,
      store: "up",
      queue: "up",
      running: 0,
      maxInFlight: 3,
      closed: false,
    });

    const body = notification("SUBSCRIPTION_RENEW");
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await worker.health()).running === 1, 10_000, "the handler to start");
    expect(await worker.health()).toMatchObject({ ok: true, running: 1, inFlight: 1 });
    release();
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the job to complete");
    await eventually(async () => (await worker.health()).running === 0, 5_000, "the run to end");

    // Frozen: connections stay open and nothing answers; the pings miss their time-out.
    redis.freeze();
    try {
      expect(await worker.health({ timeoutMs: 300 })).toMatchObject({ ok: false, store: "down", queue: "down" });
    } finally {
      redis.thaw();
    }
    await eventually(async () => (await worker.health()).ok, 10_000, "health to recover after the thaw");

    // Killed: the connection is refused until the server is back.
    await redis.stop();
    expect(await worker.health({ timeoutMs: 300 })).toMatchObject({ ok: false, queue: "down", closed: false });
    await redis.start();
    await eventually(async () => (await worker.health()).ok, 15_000, "health to recover after the restart");

    await worker.close({ timeoutMs: 1_000 });
    expect(await worker.health({ timeoutMs: 300 })).toMatchObject({ ok: false, closed: true, running: 0 });
  });

  it("is not ok once the BullMQ worker underneath stopped taking jobs, though Redis is up", async () => {
    const redis = await ownRedisServer();
    cleanup.push(() => redis.stop());
    const store = redisStore({ connection: redis.url, prefix: uniquePrefix("health-stopped") });
    cleanup.push(async () => store.close?.());
    const worker = createWorker({
      connection: redis.url,
      name: "health-stopped",
      idempotency: store,
      logger: silentLogger(),
      sweepQueuedEveryMs: 0,
      onRenew: async () => {},
    });
    cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
    await worker.waitUntilReady();
    expect((await worker.health()).ok).toBe(true);

    await worker.worker.close();
    expect(await worker.health()).toMatchObject({ ok: false, store: "up", queue: "up", closed: false });
  });
});
