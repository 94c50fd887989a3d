import { Redis } from "ioredis";
import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

// A random-looking notification id whose digits "32638105111479" pass the Luhn check: the card scanner
// masks such a run in text, but the id is the record's key and must reach the handler as it was sent.
const CARD_LIKE_ID = "WH-C32638105111479BA3EB";

describe("a notification id holding a card-like run of digits, through BullMQ without a seal", () => {
  const prefix = uniquePrefix("card-like-id");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:` });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "card-like-id", prefix });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
  const seen: string[] = [];
  const worker = createWorker({
    connection: REDIS_URL,
    name: "card-like-id",
    prefix,
    idempotency: store,
    logger: silentLogger(),
    onRenew: async (n) => {
      seen.push(n.id);
    },
  });

  afterAll(async () => {
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
    await store.close?.();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("reaches the handler under its own id, once, and its record completes", async () => {
    const body = { ...(notification() as SubscriptionNotification), id: CARD_LIKE_ID };
    const post = () =>
      receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: json(body) });
    expect((await post()).status).toBe(200);
    await eventually(async () => (await store.get(CARD_LIKE_ID))?.state === "completed", 15_000, "completion");
    expect(seen).toEqual([CARD_LIKE_ID]);
    const again = await post();
    expect(JSON.parse(again.body)).toMatchObject({ processed: true, message: "already processed" });
    expect(seen).toEqual([CARD_LIKE_ID]);
  });
});
