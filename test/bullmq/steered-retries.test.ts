import { createReceiver, NonRetriableError, RetryAfterError } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor, redrive } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { redisTestbed } from "../support/redis-testbed.js";

/** The queue's own back-off is a minute: a retry sooner than that can only be the handler's delay. */
const QUEUE_BACKOFF_MS = 60_000;
const RETRY_AFTER_MS = 300;
const CARD = "4111111111111111";

describe("a BullMQ worker's handler steers its retries", () => {
  const { prefix, store, closeAfter } = redisTestbed("steer");

  type Run = { id: string; attempt: number; startedAt: number; endedAt: number };
  function setup(name: string, fail: (run: number) => Error | undefined, attempts = 3) {
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name,
      prefix,
      jobOptions: { attempts, backoff: { type: "fixed", delay: QUEUE_BACKOFF_MS } },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const runs: Run[] = [];
    const { logger, lines, text } = captureLogger();
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: store,
      logger,
      onRenew: async (n, ctx) => {
        const run: Run = { id: n.id, attempt: ctx.attempt, startedAt: Date.now(), endedAt: 0 };
        runs.push(run);
        const err = fail(runs.length);
        run.endedAt = Date.now();
        if (err) throw err;
      },
    });
    closeAfter(
      () => worker.close({ timeoutMs: 1_000 }),
      () => queue.close(),
      () => receiver.close(),
    );
    const state = (id: string) => queue.queue.getJobState(jobIdFor(id));
    return { queue, receiver, runs, lines, text, state };
  }

  it("NonRetriableError: one run, straight to the failed set with attempts left; redrive runs it once more", async () => {
    let refuse = true;
    const { receiver, runs, lines, text, state, queue } = setup("non-retriable", () =>
      refuse ? new NonRetriableError(`subscription of card ${CARD} was deleted`) : undefined,
    );
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await state(body.id)) === "failed", 10_000, "the job in the failed set");
    expect(runs.map((r) => r.attempt)).toEqual([1]);
    const job = await queue.queue.getJob(jobIdFor(body.id));
    expect(job?.attemptsMade).toBe(1);
    expect(job?.failedReason).toMatch(/^non-retriable: subscription of card /);
    expect(job?.failedReason).not.toContain(CARD);
    expect(await store.get(body.id)).toMatchObject({ state: "failed", error: "handler_refused" });
    const line = lines().find((l) => l.outcome === "handler_refused");
    expect(line).toMatchObject({ level: 50, final: true, notification_id: body.id });
    expect(line?.msg).toBe("notification refused by its handler (non-retriable); left in the failed set");
    expect(text()).not.toContain(CARD);

    refuse = false;
    expect(await redrive({ connection: REDIS_URL, name: "non-retriable", prefix, ids: [body.id] })).toEqual({
      redriven: [body.id],
      notFailed: [],
    });
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the redriven run");
    expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it("RetryAfterError once: run again after its delay (not the queue's back-off), then completed", async () => {
    const { receiver, runs, lines, text } = setup("retry-after", (run) =>
      run === 1 ? new RetryAfterError(`rate limited for card ${CARD}`, RETRY_AFTER_MS) : undefined,
    );
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 20_000, "the second run");
    expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
    // The second run starts after the first failed plus the delay asked for (a loaded machine only makes it later).
    expect(runs[1]!.startedAt - runs[0]!.endedAt).toBeGreaterThanOrEqual(RETRY_AFTER_MS - 5);
    const line = lines().find((l) => l.outcome === "handler_retry_later");
    expect(line).toMatchObject({ level: 40, final: false, retry_in_ms: RETRY_AFTER_MS, job_attempt: 1 });
    expect(line?.msg).toBe("notification failed; its handler asked to be retried later, and is");
    expect(lines().filter((l) => l.outcome === "processed")).toHaveLength(1);
    expect(text()).not.toContain(CARD);
  });

  it("RetryAfterError every time: one of the attempts each, then the failed set", async () => {
    const { receiver, runs, state, lines } = setup("retry-after-always", () => new RetryAfterError("not yet", 50), 2);
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await state(body.id)) === "failed", 10_000, "the job in the failed set");
    expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
    expect(
      lines()
        .filter((l) => l.outcome === "handler_retry_later")
        .map((l) => l.final),
    ).toEqual([false, true]);
  });

  it("a plain Error keeps the queue's back-off", async () => {
    const { receiver, runs, state, queue, lines } = setup("plain", () => new Error("down"));
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await state(body.id)) === "delayed", 10_000, "the job waiting for its retry");
    expect((await queue.queue.getJob(jobIdFor(body.id)))?.delay).toBe(QUEUE_BACKOFF_MS);
    expect(runs).toHaveLength(1);
    expect(lines().find((l) => l.outcome === "handler_failed")?.msg).toBe("notification failed; will retry");
  });
});
