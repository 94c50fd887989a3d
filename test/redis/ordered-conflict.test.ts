import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** As a new user meets it: one id, sent again with another subscription, to a receiver with ordering. */
describe("redisStore with ordering: a used id with a different payload", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("ordered-conflict");
  const store = redisStore({ connection: REDIS_URL, prefix });
  afterAll(async () => {
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("answers 422 to the same id under another subscription, and its handler ran once", async () => {
    let runs = 0;
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      ordering: true,
      onRenew: async () => void runs++,
    });
    const post = (body: Record<string, unknown>) =>
      receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: json(body) });
    const first = notification();
    const again = structuredClone(first);
    again.resource.id = "SUB-another";
    expect((await post(first)).status).toBe(200);
    const answer = await post(again);
    expect(answer.status).toBe(422);
    expect(JSON.parse(String(answer.body))).toMatchObject({ processed: false });
    expect((await post(first)).status).toBe(200); // the first payload again: a duplicate
    expect(runs).toBe(1);
    await receiver.close();
  });
});
