import { createHash } from "node:crypto";
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

type Answer = { status: number; answer: { processed: boolean; message: string } };
type Route = (body: unknown) => Promise<Answer>;

/** Both routes' first step: the package's schema, and the log line's fields; or the 400 answer. */
async function validator() {
  const { subscriptionNotificationSchema } = await library("index");
  return (body: unknown) => {
    const parsed = subscriptionNotificationSchema.safeParse(body);
    if (!parsed.success)
      return { refusal: { status: 400, answer: { processed: false, message: "invalid notification" } } };
    const notification = parsed.data;
    const fields = {
      notification_id: notification.id,
      event_type: notification.event_type,
      merchant_id: notification.resource.merchant_id,
    };
    return { notification, fields };
  };
}

/**
 * The reference a competent user writes in about forty lines instead of using the library: the
 * framework's JSON parser in front, then this: validate with the package's schema, dedupe (a `Map`, or
 * Redis `SET NX PX` then `SET`), run the handler, one pino log line, and the answer.
 */
export async function handWrittenRoute(): Promise<Route> {
  const validate = await validator();
  const log = benchLogger();
  const dedupe = useRedis() ? redisDedupe() : memoryDedupe();
  const onRenew = (_notification: unknown) => {};
  return async (body) => {
    const valid = validate(body);
    if (valid.refusal) return valid.refusal;
    const { notification, fields } = valid;
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

/** Largest body the guarded routes accept, as the library's default `bodyLimit`. */
export const GUARDED_BODY_LIMIT = 256 * 1024;
/** The handler's time limit in the guarded routes (the library's default `timeoutMs`). */
const HANDLER_TIMEOUT_MS = 10_000;
/** How many ids the guarded memory route remembers (the library's `memoryStore` bound is by entries too). */
const MAX_REMEMBERED = 2_000_000;

type Claim = { status: "claimed" } | { status: "processing" } | { status: "done"; hash: string };

interface GuardedDedupe {
  claim(id: string, hash: string): Claim | Promise<Claim>;
  done(id: string, hash: string): unknown;
  /** The handler failed: the claim is let go, so the sender's retry runs it again. */
  release(id: string): unknown;
}

function guardedMemoryDedupe(): GuardedDedupe {
  const seen = new Map<string, Claim>();
  return {
    claim(id) {
      const known = seen.get(id);
      if (known) return known;
      // Bounded: the oldest id goes first (a Map iterates in insertion order).
      if (seen.size >= MAX_REMEMBERED) seen.delete(seen.keys().next().value!);
      seen.set(id, { status: "processing" });
      return { status: "claimed" };
    },
    done: (id, hash) => seen.set(id, { status: "done", hash }),
    release: (id) => seen.delete(id),
  };
}

function guardedRedisDedupe(): GuardedDedupe {
  const redis = new Redis(redisUrl());
  const key = (id: string) => `bench:guarded:${process.pid}:${id}`;
  return {
    async claim(id) {
      if ((await redis.set(key(id), "processing", "PX", 30_000, "NX")) === "OK") return { status: "claimed" };
      const value = await redis.get(key(id));
      if (value === null) return { status: "processing" }; // expired in between: the sender retries
      return value === "processing" ? { status: "processing" } : { status: "done", hash: value.slice(5) };
    },
    done: (id, hash) => redis.set(key(id), `done:${hash}`, "EX", BENCH_RETENTION_SECONDS),
    release: (id) => redis.del(key(id)),
  };
}

/** JSON text with every object's keys sorted: what a user writes to hash a payload whatever its key order. */
function sortedJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${sortedJson(object[key])}`)
    .join(",")}}`;
}

/** The handler's result, within the time limit when it returns a promise (a synchronous one needs no timer). */
async function withinLimit(result: unknown): Promise<void> {
  if (!(result instanceof Promise)) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      result,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("handler timed out")), HANDLER_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * "Hand-written, same guarantees": the hand-written route with what it leaves out added the way a
 * competent user would, so the library is also measured against a route that does not lose
 * notifications. The framework's JSON parser with the body limit in front (`GUARDED_BODY_LIMIT`,
 * 413), then: validate with the package's schema, a SHA-256 of the payload's key-sorted JSON, claim
 * (a bounded `Map`, or Redis `SET NX PX` then `GET` on a duplicate), 409 for an id still in progress,
 * 422 for another payload under a completed id, the handler under a time limit, the claim released
 * when the handler throws or times out (500: the sender retries and it runs again), one pino log line,
 * and the answer.
 */
export async function guardedHandWrittenRoute(): Promise<Route> {
  const validate = await validator();
  const log = benchLogger();
  const dedupe = useRedis() ? guardedRedisDedupe() : guardedMemoryDedupe();
  const onRenew = (_notification: unknown): unknown => undefined;
  return async (body) => {
    const valid = validate(body);
    if (valid.refusal) return valid.refusal;
    const { notification, fields } = valid;
    const hash = createHash("sha256").update(sortedJson(body)).digest("hex");
    const claim = await dedupe.claim(notification.id, hash);
    if (claim.status === "processing") {
      log.info(fields, "notification in progress");
      return { status: 409, answer: { processed: false, message: "in progress" } };
    }
    if (claim.status === "done") {
      if (claim.hash !== hash) {
        log.warn(fields, "another payload under a processed id");
        return { status: 422, answer: { processed: false, message: "payload differs" } };
      }
      log.info(fields, "duplicate notification");
      return { status: 200, answer: { processed: true, message: "duplicate" } };
    }
    try {
      await withinLimit(onRenew(notification));
    } catch (err) {
      await dedupe.release(notification.id);
      log.error({ ...fields, err }, "notification failed");
      return { status: 500, answer: { processed: false, message: "handler failed" } };
    }
    await dedupe.done(notification.id, hash);
    log.info(fields, "notification handled");
    return { status: 200, answer: { processed: true, message: "processed" } };
  };
}
