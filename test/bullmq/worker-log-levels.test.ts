import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { backlog, sendAll, untilQueueEmpty } from "../ordering/fixtures/mailbox.js";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** Error level is for a notification that failed; a lost lock or a wait for a retry is not one. */
describe("the worker's log levels", () => {
  const prefix = uniquePrefix("log-levels");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:`, timeoutMs: 5_000 });
  const queue = bullmqQueue({
    connection: REDIS_URL,
    name: "levels",
    prefix,
    jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
  });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
  const log = captureLogger();
  const failedOnce = new Set<string>();
  const worker = createWorker({
    connection: REDIS_URL,
    name: "levels",
    prefix,
    idempotency: store,
    logger: log.logger,
    onRenew: async (n) => {
      if (failedOnce.has(n.id)) return;
      failedOnce.add(n.id);
      throw new Error(`transient failure of ${n.id}`);
    },
  });

  afterAll(async () => {
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
    await queue.close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("one error line per failed run of a lane, none for its waits; a lost lock is a warning", async () => {
    const notifications = backlog(`${prefix}-lane`, 3);
    await sendAll(receiver, notifications);
    await eventually(
      async () =>
        (await Promise.all(notifications.map((n) => store.list!({ id: n.id })))).every(
          (page) => page.items[0]?.state === "completed",
        ),
      30_000,
      "every notification completed",
    );
    await untilQueueEmpty(queue);
    const errors = log.lines().filter((line) => line.level >= 50);
    expect(errors.map((line) => [line.notification_id, line.attempt, line.msg])).toEqual(
      notifications.map((n) => [n.id, 1, "notification failed; will retry in its lane"]),
    );
    const waits = log.lines().filter((line) => line.outcome === "postponed");
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((line) => line.level === 20 && /retry/.test(line.msg))).toBe(true);

    // BullMQ reports a job whose lock lapsed under a frozen worker as a worker error.
    worker.worker.emit("error", new Error("Missing lock for job 1. moveToFinished"));
    const lock = log.lines().at(-1)!;
    expect(lock.level).toBe(40);
    expect(lock.msg).toMatch(/lock was lost/);
  });
});
