import { Redis } from "ioredis";
import { createReceiver, inProcessQueue, memoryStore } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

// One signature for every close: `close({ timeoutMs })`. The bare number the receiver and the worker
// took before 0.1.0 is refused, naming the form to use, rather than read as no limit.

/** A handler that runs until released, and a way to know it started. */
function stuckHandler() {
  let started = false;
  let release: () => void = () => {};
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    handler: async () => {
      started = true;
      await done;
    },
    started: () => started,
    release: () => release(),
  };
}

describe("close({ timeoutMs })", () => {
  it("in-process queue: stops waiting for a handler still running after timeoutMs, and refuses new work", async () => {
    const stuck = stuckHandler();
    const queue = inProcessQueue({ drainTimeoutMs: 60_000 });
    const receiver = createReceiver({ logger: silentLogger(), queue, onRenew: stuck.handler });
    expect((await receiver.handle(post(notification()))).status).toBe(200);
    await eventually(async () => stuck.started(), 10_000, "the handler to start");
    // Without the limit the queue would wait out its drainTimeoutMs of a minute: the test would time out.
    await receiver.close({ timeoutMs: 50 });
    expect(queue.running).toBe(1);
    expect((await receiver.handle(post(notification()))).status).toBe(503);
    stuck.release();
    await eventually(async () => queue.running === 0, 10_000, "the handler to finish");
  });

  it("in-process queue: close() with no limit waits for its accepted work", async () => {
    const queue = inProcessQueue();
    let finished = 0;
    await queue.enqueue({ run: async () => void finished++ } as never);
    await queue.close();
    expect(finished).toBe(1);
  });

  it("receiver: refuses the bare number taken before 0.1.0, naming { timeoutMs }", async () => {
    const receiver = createReceiver({ logger: silentLogger(), idempotency: memoryStore(), onRenew: () => {} });
    expect((await receiver.handle(post(notification()))).status).toBe(200);
    await expect(receiver.close(1_000 as never)).rejects.toMatchObject({
      code: "MW_CLOSE_OPTIONS",
      message: "close: pass { timeoutMs: 1000 }, not a bare number",
    });
    await expect(receiver.close({ timeoutMs: 1_000 })).resolves.toBeUndefined();
  });

  it("refuses a limit that is not a number of milliseconds, naming it", async () => {
    const receiver = createReceiver({ logger: silentLogger(), onRenew: () => {} });
    await expect(receiver.close({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs must be a number/);
    await receiver.close();
  });
});

describe("close({ timeoutMs }) on BullMQ's queue and worker, against Redis", () => {
  const prefix = uniquePrefix("close");
  const redis = new Redis(REDIS_URL);
  afterAll(async () => {
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("worker: resolves false once timeoutMs passes with a handler still running, true when none is", async () => {
    const stuck = stuckHandler();
    const store = memoryStore();
    const queue = bullmqQueue({ connection: REDIS_URL, name: "close", prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const worker = createWorker({
      connection: REDIS_URL,
      name: "close",
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: stuck.handler,
    });
    expect((await receiver.handle(post(notification()))).status).toBe(200);
    await eventually(async () => stuck.started(), 15_000, "the worker to start the handler");
    expect(await worker.close({ timeoutMs: 100 })).toBe(false);
    stuck.release();
    await receiver.close({ timeoutMs: 5_000 }); // closes the BullMQ queue with the same limit

    const idle = createWorker({
      connection: REDIS_URL,
      name: "close-idle",
      prefix,
      idempotency: store,
      logger: silentLogger(),
    });
    await idle.waitUntilReady();
    expect(() => idle.close(5_000 as never)).toThrow("close: pass { timeoutMs: 5000 }, not a bare number");
    expect(await idle.close({ timeoutMs: 5_000 })).toBe(true);
  });

  it("queue: closes with { timeoutMs } and its connection is gone after", async () => {
    const queue = bullmqQueue({ connection: REDIS_URL, name: "close-queue", prefix });
    await eventually(
      () =>
        queue.ping().then(
          () => true,
          () => false,
        ),
      10_000,
      "the queue to connect",
    );
    await queue.close({ timeoutMs: 5_000 });
    await expect(queue.ping()).rejects.toThrow();
  });
});
