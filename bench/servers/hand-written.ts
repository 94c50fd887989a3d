import { Redis } from "ioredis";
import { BENCH_RETENTION_SECONDS, benchLogger, redisUrl, useRedis } from "./bench-options.js";
import { library } from "./library.js";

interface Dedupe {
  /** True when this id was not seen before and is now ours. */
  claim(id: string): boolean | Promise<boolean>;
  done(id: string): unknown;
}

function memoryDedupe(): Dedupe {
  const seen = new Map<string, "processing" | "done">();
  return {
    claim: (id) => !seen.has(id) && !!seen.set(id, "processing"),
    done: (id) => seen.set(id, "done"),
  };
}

function redisDedupe(): Dedupe {
  const redis = new Redis(redisUrl());
  const key = (id: string) => `bench:hand:${process.pid}:${id}`;
  return {
    claim: async (id) => (await redis.set(key(id), "processing", "PX", 30_000, "NX")) === "OK",
    done: (id) => redis.set(key(id), "done", "EX", BENCH_RETENTION_SECONDS),
  };
}

/**
 * The reference a competent user writes in about forty lines instead of using the library: the
 * framework's JSON parser in front, then this: validate with the package's schema, dedupe (a `Map`, or
 * Redis `SET NX PX` then `SET`), run the handler, one pino log line, and the answer.
 */
export async function handWrittenRoute(): Promise<
  (body: unknown) => Promise<{ status: number; answer: { processed: boolean; message: string } }>
> {
  const { subscriptionNotificationSchema } = await library("index");
  const log = benchLogger();
  const dedupe = useRedis() ? redisDedupe() : memoryDedupe();
  const onRenew = (_notification: unknown) => {};
  return async (body) => {
    const parsed = subscriptionNotificationSchema.safeParse(body);
    if (!parsed.success) return { status: 400, answer: { processed: false, message: "invalid notification" } };
    const notification = parsed.data;
    const fields = {
      notification_id: notification.id,
      event_type: notification.event_type,
      merchant_id: notification.resource.merchant_id,
    };
    if (!(await dedupe.claim(notification.id))) {
      log.info(fields, "duplicate notification");
      return { status: 200, answer: { processed: true, message: "duplicate" } };
    }
    await onRenew(notification);
    await dedupe.done(notification.id);
    log.info(fields, "notification handled");
    return { status: 200, answer: { processed: true, message: "processed" } };
  };
}
