import { pino } from "pino";
import { memoryStore, type IdempotencyStore } from "merchant-webhooks";

/** Log lines are produced and serialized as in production, then written to /dev/null. */
export const benchLogger = () => pino(pino.destination({ dest: "/dev/null", sync: false }));

/**
 * `BENCH_STORE=redis` runs the adapter on redisStore (a fresh prefix per run); otherwise the memory
 * store, large enough that no record is evicted during a run.
 */
export async function benchStore(): Promise<IdempotencyStore> {
  if (process.env.BENCH_STORE !== "redis") return memoryStore({ maxEntries: 2_000_000 });
  const { redisStore } = await import("merchant-webhooks/redis");
  return redisStore({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", prefix: `bench:${process.pid}:` });
}
