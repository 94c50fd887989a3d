import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { redisTestbed } from "../support/redis-testbed.js";

const BACKOFF_MS = 1_500;
const post = (text: string) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(text),
});

/**
 * A sender re-serialises its retry (other spacing and key order) while the job waits out its retry
 * backoff. The job must still run to completion: it is never dropped while its notification is not
 * completed, and "already processed" is only ever said of a notification whose handler succeeded.
 */
describe("a re-serialised redelivery during a job's retry backoff", () => {
  const { prefix, store, closeAfter } = redisTestbed("reserialised");

  it("runs the job's retry, which completes the notification, and the redelivery is not acknowledged before that", async () => {
    const name = "reserialised";
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name,
      prefix,
      jobOptions: { attempts: 3, backoff: { type: "fixed", delay: BACKOFF_MS } },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const runs: Array<{ attempt: number; ok: boolean }> = [];
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (_n, ctx) => {
        const ok = runs.length > 0;
        runs.push({ attempt: ctx.attempt, ok });
        if (!ok) throw new Error("downstream timed out");
      },
    });
    closeAfter(
      () => worker.close({ timeoutMs: 1_000 }),
      () => receiver.close(),
    );

    const body = notification();
    expect((await receiver.handle(post(JSON.stringify(body)))).status).toBe(200);
    await eventually(() => runs.length === 1, 10_000, "the first, failing run");
    await eventually(async () => (await store.get(body.id))?.state === "failed", 5_000, "the record to be failed");

    // The platform's retry, re-serialised, lands during the job's backoff.
    const keysReversed = JSON.stringify(Object.fromEntries(Object.entries(body).reverse()), null, 2);
    const redelivery = await receiver.handle(post(keysReversed));
    expect(redelivery.status).toBe(200);

    await eventually(
      async () => (await store.get(body.id))?.state === "completed",
      10_000,
      "the notification to complete",
    );
    expect(runs.map((run) => run.ok)).toEqual([false, true]);
    // Completed jobs are removed (removeOnComplete): none is left waiting, delayed or failed.
    await eventually(
      async () => (await queue.queue.getJobState(jobIdFor(body.id))) === "unknown",
      5_000,
      "the job to complete",
    );
    const later = await receiver.handle(post(JSON.stringify(body)));
    expect(JSON.parse(later.body)).toEqual({ processed: true, message: "already processed" });
  });
});
