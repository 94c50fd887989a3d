import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { type RedisStore, redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import { reserialise } from "../support/reserialise.js";

const encode = (text: string) => new TextEncoder().encode(text);
const post = (text: string) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: encode(text),
});
const answerOf = (response: { status: number; body: string }) => [response.status, JSON.parse(response.body)] as const;

const reserialised = (value: unknown) => reserialise(value, 1, true);

const LEASE_MS = 150;

/**
 * A sender that re-serialises each retry: other whitespace, key order and escapes, the same JSON
 * value. Each store must treat it as the same notification.
 */
function reserialisingSenderSuite(name: string, makeStore: () => IdempotencyStore) {
  describe(`a sender that re-serialises retries, on ${name}`, () => {
    it("gets 200 'already processed' for a re-serialised duplicate of a completed notification, with the handler run once", async () => {
      let calls = 0;
      const receiver = createReceiver({
        logger: silentLogger(),
        idempotency: makeStore(),
        onRenew: () => void calls++,
      });
      const renewal = notification();
      expect(answerOf(await receiver.handle(post(JSON.stringify(renewal))))).toEqual([
        200,
        { processed: true, message: "processed" },
      ]);
      const again = await receiver.handle(post(reserialised(renewal)));
      expect(answerOf(again)).toEqual([200, { processed: true, message: "already processed" }]);
      expect(calls).toBe(1);
    });

    it("runs the handler for a re-serialised retry after the first receiver died holding the claim", async () => {
      const store = makeStore();
      const renewal = notification();
      // The first delivery's receiver claimed the id and died (SIGKILL: no fail, no release); its
      // lease lapses with the record still processing, under another serialisation's fingerprint.
      await store.claim({
        id: renewal.id,
        fingerprint: "fingerprint-of-the-first-bytes",
        owner: "dead-receiver",
        leaseMs: LEASE_MS,
      });
      let calls = 0;
      const receiver = createReceiver({
        logger: silentLogger(),
        idempotency: store,
        leaseMs: LEASE_MS,
        onRenew: () => void calls++,
      });
      expect((await receiver.handle(post(reserialised(renewal)))).status).toBe(409);
      await sleep(LEASE_MS + 50);
      expect(answerOf(await receiver.handle(post(reserialised(renewal))))).toEqual([
        200,
        { processed: true, message: "processed" },
      ]);
      expect(calls).toBe(1);
    });

    it("runs the handler for a re-serialised retry of a notification whose handler failed", async () => {
      let calls = 0;
      const receiver = createReceiver({
        logger: silentLogger(),
        idempotency: makeStore(),
        onRenew: () => {
          if (++calls === 1) throw new Error("database down");
        },
      });
      const renewal = notification();
      expect((await receiver.handle(post(JSON.stringify(renewal)))).status).toBe(500);
      expect(answerOf(await receiver.handle(post(reserialised(renewal))))).toEqual([
        200,
        { processed: true, message: "processed" },
      ]);
      expect(calls).toBe(2);
    });

    it("still answers 422 to a different JSON value under the id of a completed notification", async () => {
      let calls = 0;
      const receiver = createReceiver({
        logger: silentLogger(),
        idempotency: makeStore(),
        onRenew: () => void calls++,
      });
      const renewal = notification();
      await receiver.handle(post(JSON.stringify(renewal)));
      const altered = { ...renewal, create_time: "2026-11-24T00:00:00Z" };
      expect(answerOf(await receiver.handle(post(reserialised(altered))))[0]).toBe(422);
      expect(calls).toBe(1);
    });
  });
}

reserialisingSenderSuite("memoryStore", () => memoryStore());

const redis = new Redis(REDIS_URL);
const prefix = uniquePrefix("reserialise");
const opened: RedisStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  await removeKeys(redis, prefix);
  redis.disconnect();
});
reserialisingSenderSuite("redisStore", () => {
  const store = redisStore({ connection: REDIS_URL, prefix });
  opened.push(store);
  return store;
});
