import { Redis } from "ioredis";
import { createReceiver, memoryStore, type Receiver } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";
import { JSON_HEADERS, renewalBody } from "./renewal-body.js";

/**
 * The latency the Redis path adds per notification: the core receiver with `redisStore` against the
 * same receiver with `memoryStore`, one notification at a time (a claim and a completion per
 * notification, each one round trip). The two receivers take turns, notification by notification,
 * so drift in the machine's load affects both alike.
 *
 *   npx tsx bench/redis-latency.ts            (REDIS_URL, REDIS_LATENCY_NOTIFICATIONS to change)
 */
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const total = Number(process.env.REDIS_LATENCY_NOTIFICATIONS ?? 5_000);
const warmUp = 1_000;

const headers = JSON_HEADERS;
const body = renewalBody;

const prefix = `mwbench-${process.pid}-${Date.now().toString(36)}:`;
const store = redisStore({ connection: url, prefix });
const logger = pino({ level: "silent" });
const receivers: Record<"memory" | "redis", Receiver> = {
  memory: createReceiver({ logger, idempotency: memoryStore(), onRenew: () => {} }),
  redis: createReceiver({ logger, idempotency: store, onRenew: () => {} }),
};
const samples: Record<keyof typeof receivers, number[]> = { memory: [], redis: [] };

for (let i = 0; i < warmUp + total; i++) {
  for (const name of ["memory", "redis"] as const) {
    const rawBody = body(`${name}-${i}`);
    const started = performance.now();
    const response = await receivers[name].handle({ method: "POST", headers, rawBody });
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`${name}: unexpected ${response.status} ${response.body}`);
    if (i >= warmUp) samples[name].push(elapsed);
  }
}

// The floor: one bare round trip to the same Redis (the Redis path makes two: claim and complete).
const pinger = new Redis(url);
const pings: number[] = [];
for (let i = 0; i < warmUp + total; i++) {
  const started = performance.now();
  await pinger.ping();
  if (i >= warmUp) pings.push(performance.now() - started);
}
pinger.disconnect();

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const ms = (value: number) => Math.round(value * 1000) / 1000;
const summary = (values: number[]) => ({ median_ms: ms(quantile(values, 0.5)), p99_ms: ms(quantile(values, 0.99)) });
const memory = summary(samples.memory);
const redis = summary(samples.redis);
console.log(
  JSON.stringify(
    {
      notifications: total,
      memory,
      redis,
      added_by_redis: { median_ms: ms(redis.median_ms - memory.median_ms), p99_ms: ms(redis.p99_ms - memory.p99_ms) },
      redis_ping_round_trip: summary(pings),
      node: process.version,
    },
    null,
    2,
  ),
);

// Leave Redis as it was found.
const cleaner = new Redis(url);
let cursor = "0";
do {
  const [next, keys] = await cleaner.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
  cursor = next;
  if (keys.length > 0) await cleaner.unlink(...keys);
} while (cursor !== "0");
cleaner.disconnect();
await store.close();
