import { Redis } from "ioredis";
import { afterAll } from "vitest";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** A key prefix for the calling suite's queues, whose keys are removed after the suite. */
export function suitePrefix(label: string): string {
  const prefix = uniquePrefix(label);
  afterAll(async () => {
    const redis = new Redis(REDIS_URL);
    await removeKeys(redis, prefix);
    redis.disconnect();
  });
  return prefix;
}
