import { Redis } from "ioredis";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll } from "vitest";
import { REDIS_URL, removeKeys, uniquePrefix } from "./redis.js";

/**
 * A test file's Redis: a key prefix of its own, a client, a `redisStore` under `storePrefix`, and
 * `closeAfter` for the receivers, queues and workers it makes. After the file's tests they are closed
 * newest first, then the store, and every key under the prefix is removed.
 */
export function redisTestbed(label: string) {
  const prefix = uniquePrefix(label);
  const storePrefix = `${prefix}-store:`;
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: storePrefix });
  const closers: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  return {
    prefix,
    storePrefix,
    redis,
    store,
    closeAfter: (...close: Array<() => Promise<unknown>>) => closers.push(...close),
  };
}
