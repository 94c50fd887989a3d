import { Redis } from "ioredis";
import { createReceiver, type HandlerContext, type RenewalEvent } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

describe("a queue worker's hooks and ctx.event", () => {
  const prefix = uniquePrefix("hooks");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}-store:` });
  const queue = bullmqQueue({
    connection: REDIS_URL,
    name: "hooks",
    prefix,
    jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
  });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
  const onRenew = vi.fn().mockRejectedValueOnce(new Error("first run fails")).mockResolvedValue(undefined);
  const onAny = vi.fn();
  const onError = vi.fn();
  const worker = createWorker({
    connection: REDIS_URL,
    name: "hooks",
    prefix,
    idempotency: store,
    logger: silentLogger(),
    onRenew,
    onAny,
    onError,
  });

  afterAll(async () => {
    await worker.close({ timeoutMs: 1_000 });
    await receiver.close();
    await store.close?.();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("reports the failed attempt to onError, then runs onRenew and onAny once with the renewal event", async () => {
    const body = notification("SUBSCRIPTION_RENEW");
    const response = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(body),
    });
    expect(response.status).toBe(200);
    await eventually(
      async () => (await store.get(body.id))?.state === "completed",
      10_000,
      "the notification to complete",
    );

    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls[0]![0]).toMatchObject({ message: "first run fails" });
    expect((onError.mock.calls[0]![2] as HandlerContext).attempt).toBe(1);
    expect(onRenew).toHaveBeenCalledTimes(2);
    expect(onAny).toHaveBeenCalledTimes(1);
    const ctx = onAny.mock.calls[0]![1] as HandlerContext<RenewalEvent | undefined>;
    expect(ctx.attempt).toBe(2);
    // The queued copy never holds card verification data (see the security suite), so compare the rest.
    const { card_info: _card, ...paymentDetail } = body.resource.renewal_event.payment_detail;
    expect(ctx.event?.payment_detail).toMatchObject(paymentDetail);
    expect(ctx.event?.subscription_plan_type).toBe(body.resource.renewal_event.subscription_plan_type);
  });
});
