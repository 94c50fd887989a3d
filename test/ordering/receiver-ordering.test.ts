import { Redis } from "ioredis";
import {
  createReceiver,
  type HandlerContext,
  type IdempotencyStore,
  memoryStore,
  type ReceiverOptions,
} from "merchant-webhooks";
import { failFastRedisOptions, redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

type EventType = "SUBSCRIPTION_RENEW" | "SUBSCRIPTION_CANCELLED";

let subscriptions = 0;
/** A fresh subscription per test, so the Redis suite's tests cannot see each other's positions. */
const subscription = () => `SUB-${process.pid}-${++subscriptions}`;

const event = (type: EventType, sub: string, updateTime: string, merchant = "M-1") =>
  buildNotification(type, { resource: { merchant_id: merchant, id: sub, update_time: updateTime } }, { random: true });

const post = (notification: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: new TextEncoder().encode(JSON.stringify(notification)),
});

const answerOf = (response: { status: number; body: string; headers: Record<string, string> }) => ({
  status: response.status,
  ...(JSON.parse(response.body) as { processed: boolean; message: string }),
});

/** A promise with its resolve, for handlers that wait on the test. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

function orderingSuite(name: string, makeStore: () => IdempotencyStore) {
  describe(`ordering: true, on ${name}`, () => {
    const receiverWith = (handlers: Partial<ReceiverOptions>) =>
      createReceiver({ idempotency: makeStore(), logger: silentLogger(), ordering: true, ...handlers });

    it("sends a renewal older than the cancellation already applied to onStale, not onRenew, and answers it 200 stale", async () => {
      const sub = subscription();
      const onRenew = vi.fn();
      const onCancel = vi.fn();
      const onStale = vi.fn();
      const receiver = receiverWith({ onRenew, onCancel, onStale });
      const renewal = event("SUBSCRIPTION_RENEW", sub, "2026-03-01T01:00:00Z");
      expect(
        answerOf(await receiver.handle(post(event("SUBSCRIPTION_CANCELLED", sub, "2026-03-01T02:00:00Z")))),
      ).toMatchObject({ status: 200 });
      const stale = answerOf(await receiver.handle(post(renewal)));
      expect(stale).toMatchObject({ status: 200, processed: true });
      expect(stale.message).toMatch(/^stale: /);
      // Recorded as completed: the sender's redelivery is a duplicate and runs nothing.
      expect(answerOf(await receiver.handle(post(renewal)))).toMatchObject({
        status: 200,
        processed: true,
        message: "already processed",
      });
      expect(onCancel).toHaveBeenCalledTimes(1);
      expect(onRenew).not.toHaveBeenCalled();
      expect(onStale).toHaveBeenCalledTimes(1);
      expect(onStale.mock.calls[0]![0]).toMatchObject({ id: renewal.id, event_type: "SUBSCRIPTION_RENEW" });
      expect((onStale.mock.calls[0]![1] as HandlerContext).previousPosition).toBe("2026-03-01T02:00:00Z");
    });

    it("handles both notifications of one position", async () => {
      const sub = subscription();
      const onRenew = vi.fn();
      const onCancel = vi.fn();
      const receiver = receiverWith({ onRenew, onCancel, onStale: vi.fn() });
      expect((await receiver.handle(post(event("SUBSCRIPTION_CANCELLED", sub, "2026-03-01T02:00:00Z")))).status).toBe(
        200,
      );
      expect(
        answerOf(await receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, "2026-03-01T10:00:00+08:00")))),
      ).toMatchObject({
        status: 200,
        message: "processed",
      });
      expect(onCancel).toHaveBeenCalledTimes(1);
      expect(onRenew).toHaveBeenCalledTimes(1);
    });

    it("compares positions as instants: 10:00+08:00 is before 02:30Z, fractions count", async () => {
      const sub = subscription();
      const onRenew = vi.fn();
      const onStale = vi.fn();
      const receiver = receiverWith({ onRenew, onCancel: () => {}, onStale });
      await receiver.handle(post(event("SUBSCRIPTION_CANCELLED", sub, "2026-03-01T02:30:00.0000005Z")));
      await receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, "2026-03-01T10:00:00+08:00")));
      await receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, "2026-03-01T02:30:00.0000004Z")));
      expect(onStale).toHaveBeenCalledTimes(2);
      await receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, "2026-03-01T02:30:00.00000051Z")));
      expect(onRenew).toHaveBeenCalledTimes(1);
    });

    it("acknowledges a stale notification without onStale, and logs it with outcome stale", async () => {
      const sub = subscription();
      const capture = captureLogger();
      const onRenew = vi.fn();
      const receiver = createReceiver({
        idempotency: makeStore(),
        logger: capture.logger,
        ordering: true,
        onRenew,
        onCancel: () => {},
      });
      await receiver.handle(post(event("SUBSCRIPTION_CANCELLED", sub, "2026-03-01T02:00:00Z")));
      const renewal = event("SUBSCRIPTION_RENEW", sub, "2026-03-01T01:00:00Z");
      expect(answerOf(await receiver.handle(post(renewal)))).toMatchObject({ status: 200, processed: true });
      expect(onRenew).not.toHaveBeenCalled();
      expect(capture.lines().find((line) => line.notification_id === renewal.id)).toMatchObject({
        outcome: "stale",
        status: 200,
      });
    });

    it("runs two subscriptions' notifications at the same time", async () => {
      const [a, b] = [subscription(), subscription()];
      const started = { [a]: gate(), [b]: gate() };
      const receiver = receiverWith({
        handlerTimeoutMs: 10_000,
        // Each handler finishes only once the other has started: run one after the other, they never would.
        onRenew: async (n) => {
          const mine = n.resource.id!;
          started[mine]!.open();
          await started[mine === a ? b : a]!.opened;
        },
      });
      const answers = await Promise.all([
        receiver.handle(post(event("SUBSCRIPTION_RENEW", a, "2026-03-01T01:00:00Z"))),
        receiver.handle(post(event("SUBSCRIPTION_RENEW", b, "2026-03-01T01:00:00Z"))),
      ]);
      expect(answers.map((response) => response.status)).toEqual([200, 200]);
    });

    it("answers a second notification of a subscription being processed 409 with Retry-After, then runs it after", async () => {
      const sub = subscription();
      const release = gate();
      const seen: Array<{ id: string; previousPosition: string | undefined }> = [];
      const receiver = receiverWith({
        onRenew: async (n, ctx) => {
          seen.push({ id: n.id, previousPosition: ctx.previousPosition });
          if (seen.length === 1) await release.opened;
        },
      });
      const first = event("SUBSCRIPTION_RENEW", sub, "2026-03-01T01:00:00Z");
      const second = event("SUBSCRIPTION_RENEW", sub, "2026-03-01T02:00:00Z");
      const running = receiver.handle(post(first));
      await vi.waitFor(() => expect(seen).toHaveLength(1));
      const refused = await receiver.handle(post(second));
      expect(answerOf(refused)).toMatchObject({ status: 409, processed: false });
      expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      release.open();
      expect((await running).status).toBe(200);
      expect((await receiver.handle(post(second))).status).toBe(200);
      expect(seen).toEqual([
        { id: first.id, previousPosition: undefined },
        { id: second.id, previousPosition: "2026-03-01T01:00:00Z" },
      ]);
    });

    it("does not move the position forward when the handler fails", async () => {
      const sub = subscription();
      const onStale = vi.fn();
      const onRenew = vi.fn();
      const receiver = receiverWith({
        onCancel: () => {
          throw new Error("ledger down");
        },
        onRenew,
        onStale,
      });
      expect((await receiver.handle(post(event("SUBSCRIPTION_CANCELLED", sub, "2026-03-01T02:00:00Z")))).status).toBe(
        500,
      );
      expect((await receiver.handle(post(event("SUBSCRIPTION_RENEW", sub, "2026-03-01T01:00:00Z")))).status).toBe(200);
      expect(onRenew).toHaveBeenCalledTimes(1);
      expect(onRenew.mock.calls[0]![1].previousPosition).toBeUndefined();
      expect(onStale).not.toHaveBeenCalled();
    });

    it("answers 500 when onStale fails, and runs it again on redelivery", async () => {
      const sub = subscription();
      let calls = 0;
      const receiver = receiverWith({
        onCancel: () => {},
        onStale: () => {
          if (++calls === 1) throw new Error("alerting down");
        },
      });
      await receiver.handle(post(event("SUBSCRIPTION_CANCELLED", sub, "2026-03-01T02:00:00Z")));
      const renewal = event("SUBSCRIPTION_RENEW", sub, "2026-03-01T01:00:00Z");
      expect(answerOf(await receiver.handle(post(renewal)))).toMatchObject({ status: 500, processed: false });
      expect(answerOf(await receiver.handle(post(renewal)))).toMatchObject({ status: 200, processed: true });
      expect(calls).toBe(2);
    });

    it("orders by the object form's key and position", async () => {
      const onRenew = vi.fn();
      const onStale = vi.fn();
      const receiver = receiverWith({
        ordering: { key: (n) => n.resource.reference_id, position: (n) => n.resource.period_start_time },
        onRenew,
        onStale,
      });
      const ref = `ref-${subscription()}`;
      const at = (start: string) =>
        buildNotification(
          "SUBSCRIPTION_RENEW",
          { resource: { reference_id: ref, id: subscription(), period_start_time: start } },
          { random: true },
        );
      await receiver.handle(post(at("2026-04-01T00:00:00Z")));
      await receiver.handle(post(at("2026-03-01T00:00:00Z")));
      expect(onRenew).toHaveBeenCalledTimes(1);
      expect(onStale).toHaveBeenCalledTimes(1);
    });
  });
}

orderingSuite("memoryStore", () => memoryStore());

const prefix = uniquePrefix("ordering");
const redis = new Redis(REDIS_URL, failFastRedisOptions());
orderingSuite("redisStore", () => redisStore({ connection: redis, prefix }));

afterAll(async () => {
  await removeKeys(redis, prefix);
  redis.disconnect();
});
