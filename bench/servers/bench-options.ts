import type { IdempotencyStore } from "merchant-webhooks";
import { pino } from "pino";
import { library } from "./library.js";

/** Log lines are produced and serialized as in production, then written to /dev/null. */
export const benchLogger = () => pino(pino.destination({ dest: "/dev/null", sync: false }));

export const redisUrl = () => process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const useRedis = () => process.env.BENCH_STORE === "redis";

/** Records expire after this in the Redis runs (the cost per write is the same), so benchmark keys do not pile up on a shared server. */
export const BENCH_RETENTION_SECONDS = 600;

/**
 * `BENCH_STORE=redis` runs the adapter on redisStore (a fresh prefix per run); otherwise the memory
 * store, large enough that no record is evicted during a run.
 */
export async function benchStore(): Promise<IdempotencyStore> {
  if (!useRedis()) return (await library("index")).memoryStore({ maxEntries: 2_000_000 });
  const { redisStore } = await library("redis");
  return redisStore({
    connection: redisUrl(),
    prefix: `bench:${process.pid}:`,
    retentionSeconds: BENCH_RETENTION_SECONDS,
  });
}
