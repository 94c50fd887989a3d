import { Redis } from "ioredis";
import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { createPaymentClient } from "merchant-webhooks/client";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

describe("ctx.platform in a BullMQ worker's handlers", () => {
  const prefix = uniquePrefix("bmqplat");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:` });
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("is the client the worker was given, and undefined without one", async () => {
    // A client nothing answers: the handlers here only look at which one they were given.
    const platform = createPaymentClient({ baseUrl: "http://127.0.0.1:9" });
    const seen = new Map<string, unknown>();
    const onRenew = async (n: SubscriptionNotification, ctx: HandlerContext) => void seen.set(n.id, ctx.platform);
    const run = async (name: string, withPlatform: boolean) => {
      const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
      const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger: silentLogger(),
        onRenew,
        ...(withPlatform ? { platform } : {}),
      });
      cleanup.push(
        () => worker.close({ timeoutMs: 1_000 }),
        () => queue.close(),
        () => receiver.close(),
      );
      const body = notification();
      const answer = await receiver.handle({
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: json(body),
      });
      expect(answer.status).toBe(200);
      await eventually(async () => seen.has(body.id), 15_000, "the handler to run");
      return seen.get(body.id);
    };
    expect(await run("with-platform", true)).toBe(platform);
    expect(await run("without-platform", false)).toBeUndefined();
  });
});
