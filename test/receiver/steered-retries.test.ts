import { Redis } from "ioredis";
import {
  createReceiver,
  type IdempotencyStore,
  inProcessQueue,
  NonRetriableError,
  RetryAfterError,
} from "merchant-webhooks";
import { createAdmin } from "merchant-webhooks/console";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const CARD = "4111111111111111";
const RETRY_AFTER_MS = 300;

type Run = { attempt: number; startedAt: number; endedAt: number };

/** A handler that fails as `fail` says on its nth run, and the runs it made. */
function steered(fail: (run: number) => Error | undefined) {
  const runs: Run[] = [];
  const onRenew = async (_n: unknown, ctx: { attempt: number }) => {
    const run: Run = { attempt: ctx.attempt, startedAt: Date.now(), endedAt: 0 };
    runs.push(run);
    const err = fail(runs.length);
    run.endedAt = Date.now();
    if (err) throw err;
  };
  return { runs, onRenew };
}

describe("a handler steers its retries", () => {
  const prefix = uniquePrefix("steer-rcv");
  const redis = new Redis(REDIS_URL);
  const store: IdempotencyStore = redisStore({ connection: REDIS_URL, prefix: `${prefix}:` });
  const admin = createAdmin({ idempotency: store });
  afterAll(async () => {
    await store.close?.();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });
  const deadLetterIds = async () => (await admin.listNotifications({ state: "failed" })).items.map((item) => item.id);

  describe("in the receiver's own run (no queue): the sender keeps the notification", () => {
    it("NonRetriableError: answered 500 'refused', recorded failed; the sender's redelivery runs it once more", async () => {
      let refuse = true;
      const { runs, onRenew } = steered(() => (refuse ? new NonRetriableError(`card ${CARD} is closed`) : undefined));
      const { logger, lines, text } = captureLogger();
      const receiver = createReceiver({ logger, idempotency: store, onRenew });
      const body = notification();
      const answer = await receiver.handle(post(body));
      expect(answer.status).toBe(500);
      expect(JSON.parse(answer.body)).toEqual({
        processed: false,
        message: "handler refused this notification; keep it: this receiver does not retry it",
      });
      expect(answer.headers["retry-after"]).toBeUndefined();
      expect(runs).toHaveLength(1);
      expect(await store.get(body.id)).toMatchObject({ state: "failed", error: "handler_refused" });
      expect(await deadLetterIds()).toContain(body.id);
      const line = lines().find((l) => l.notification_id === body.id);
      expect(line).toMatchObject({ level: 50, outcome: "handler_refused", status: 500 });
      expect(line?.msg).toBe("notification refused by its handler; not retried");
      expect(text()).not.toContain(CARD);

      refuse = false;
      const again = await receiver.handle(post(body));
      expect(JSON.parse(again.body)).toEqual({ processed: true, message: "processed" });
      expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
      await receiver.close();
    });

    it("RetryAfterError: answered 500 with Retry-After in whole seconds; the redelivery runs it", async () => {
      const { runs, onRenew } = steered((run) =>
        run === 1 ? new RetryAfterError(`card ${CARD} rate limited`, 1_500) : undefined,
      );
      const { logger, lines, text } = captureLogger();
      const receiver = createReceiver({ logger, idempotency: store, onRenew });
      const body = notification();
      const answer = await receiver.handle(post(body));
      expect(answer.status).toBe(500);
      expect(answer.headers["retry-after"]).toBe("2");
      expect(JSON.parse(answer.body)).toEqual({ processed: false, message: "handler asked to be retried later" });
      expect(await store.get(body.id)).toMatchObject({ state: "failed", error: "handler_retry_later" });
      const line = lines().find((l) => l.notification_id === body.id);
      expect(line).toMatchObject({ level: 40, outcome: "handler_retry_later", status: 500 });
      expect(line?.msg).toBe("notification not processed; its handler asked to be retried later");
      expect(text()).not.toContain(CARD);

      expect((await receiver.handle(post(body))).status).toBe(200);
      expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
      await receiver.close();
    });

    it("a plain Error: 500 'handler failed' without Retry-After, as before", async () => {
      const { runs, onRenew } = steered(() => new Error("down"));
      const { logger, lines } = captureLogger();
      const receiver = createReceiver({ logger, idempotency: store, onRenew });
      const body = notification();
      const answer = await receiver.handle(post(body));
      expect(answer.status).toBe(500);
      expect(answer.headers["retry-after"]).toBeUndefined();
      expect(JSON.parse(answer.body)).toEqual({ processed: false, message: "handler failed" });
      expect(runs).toHaveLength(1);
      expect(lines().find((l) => l.notification_id === body.id)?.msg).toBe("notification not processed");
      await receiver.close();
    });
  });

  describe("in an in-process queue", () => {
    it("NonRetriableError: one run, recorded failed (a dead letter), never run again here", async () => {
      const { runs, onRenew } = steered(() => new NonRetriableError(`card ${CARD} is closed`));
      const { logger, lines, text } = captureLogger();
      const queue = inProcessQueue();
      const receiver = createReceiver({ logger, idempotency: store, queue, onRenew });
      const body = notification();
      expect(JSON.parse((await receiver.handle(post(body))).body)).toEqual({
        processed: true,
        message: "accepted for processing",
      });
      await queue.close();
      expect(runs).toHaveLength(1);
      expect(await store.get(body.id)).toMatchObject({ state: "failed", error: "handler_refused" });
      expect(await deadLetterIds()).toContain(body.id);
      const line = lines().find((l) => l.notification_id === body.id && l.outcome === "handler_refused");
      expect(line?.msg).toBe("notification refused by its handler; not retried");
      expect(text()).not.toContain(CARD);
      await receiver.close();
    });

    it("RetryAfterError once: the claim held meanwhile, run again after the delay, then completed", async () => {
      const { runs, onRenew } = steered((run) =>
        run === 1 ? new RetryAfterError("not yet", RETRY_AFTER_MS) : undefined,
      );
      const { logger, lines } = captureLogger();
      const queue = inProcessQueue();
      const receiver = createReceiver({ logger, idempotency: store, queue, onRenew });
      const body = notification();
      expect((await receiver.handle(post(body))).status).toBe(200);
      const logged = (outcome: string) => lines().some((l) => l.notification_id === body.id && l.outcome === outcome);
      await eventually(async () => logged("handler_retry_later"), 5_000, "the first run's line");
      // Waiting for its second run, the notification is still this receiver's: a redelivery is told to wait.
      expect((await receiver.handle(post(body))).status).toBe(409);
      await queue.close();
      expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
      expect(runs[1]!.startedAt - runs[0]!.endedAt).toBeGreaterThanOrEqual(RETRY_AFTER_MS - 5);
      expect(await store.get(body.id)).toMatchObject({ state: "completed" });
      expect(
        lines()
          .filter((l) => l.notification_id === body.id)
          .map((l) => [l.outcome, l.level]),
      ).toEqual([
        ["queued", 30],
        ["handler_retry_later", 40],
        ["in_progress", 40],
        ["processed", 30],
      ]);
      await receiver.close();
    });

    it("RetryAfterError every time: 8 runs, then recorded failed, its line saying why", async () => {
      const { runs, onRenew } = steered(() => new RetryAfterError("not yet", 1));
      const { logger, lines } = captureLogger();
      const queue = inProcessQueue();
      const receiver = createReceiver({ logger, idempotency: store, queue, onRenew });
      const body = notification();
      expect((await receiver.handle(post(body))).status).toBe(200);
      await eventually(async () => (await store.get(body.id))?.state === "failed", 10_000, "the record failed");
      await queue.close();
      expect(runs.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const last = lines()
        .filter((l) => l.outcome === "handler_retry_later")
        .at(-1);
      expect(last?.reason).toBe("not run again: 8 runs in this queue");
      await receiver.close();
    });

    it("a plain Error: one run, recorded failed, as before", async () => {
      const { runs, onRenew } = steered(() => new Error("down"));
      const queue = inProcessQueue();
      const receiver = createReceiver({ logger: captureLogger().logger, idempotency: store, queue, onRenew });
      const body = notification();
      expect((await receiver.handle(post(body))).status).toBe(200);
      await queue.close();
      expect(runs).toHaveLength(1);
      expect(await store.get(body.id)).toMatchObject({ state: "failed", error: "handler_failed" });
      await receiver.close();
    });
  });
});
