import { Redis } from "ioredis";
import { createReceiver, type Receiver } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";
import { latencySummary, ms } from "./latency-stats.js";
import { JSON_HEADERS, renewalBody } from "./renewal-body.js";

/**
 * What redisStore's time index (the console's `list`) costs on the receive path: the receiver with
 * `redisStore` as it ships (the index written by the claim and completion scripts) beside the same
 * store with `timeIndex: false`, one notification at a time, taking turns notification by
 * notification so drift in the machine's load affects both alike; then each at 32 in flight for
 * throughput, again in alternating rounds. The receiver with the console not mounted runs no console
 * code at all: this index write is the only cost the console adds, and `timeIndex: false` removes it.
 *
 *   npx tsx bench/time-index.ts   (REDIS_URL, TIME_INDEX_NOTIFICATIONS to change)
 */
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const total = Number(process.env.TIME_INDEX_NOTIFICATIONS ?? 4_000);
const warmUp = 500;
const inFlight = 32;
const rounds = 10;

const tag = `mwbench-index-${process.pid}-${Date.now().toString(36)}`;
const logger = pino({ level: "silent" });
const stores = {
  indexed: redisStore({ connection: redisUrl, prefix: `${tag}:on:` }),
  unindexed: redisStore({ connection: redisUrl, prefix: `${tag}:off:`, timeIndex: false }),
};
const names = ["indexed", "unindexed"] as const;
const receivers: Record<(typeof names)[number], Receiver> = {
  indexed: createReceiver({ logger, idempotency: stores.indexed, onRenew: () => {} }),
  unindexed: createReceiver({ logger, idempotency: stores.unindexed, onRenew: () => {} }),
};

async function deliver(name: (typeof names)[number], id: string): Promise<void> {
  const response = await receivers[name].handle({ method: "POST", headers: JSON_HEADERS, rawBody: renewalBody(id) });
  if (response.status !== 200) throw new Error(`${name}: unexpected ${response.status} ${response.body}`);
}

const samples = { indexed: [] as number[], unindexed: [] as number[] };
for (let i = 0; i < warmUp + total; i++) {
  for (const name of names) {
    const started = performance.now();
    await deliver(name, `${name}-seq-${i}`);
    if (i >= warmUp) samples[name].push(performance.now() - started);
  }
}

const perSecond = { indexed: [] as number[], unindexed: [] as number[] };
for (let round = 0; round < rounds; round++) {
  for (const name of round % 2 === 0 ? [...names] : [...names].reverse()) {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < total) await deliver(name, `${name}-par-${round}-${next++}`);
      }),
    );
    perSecond[name].push(total / ((performance.now() - started) / 1000));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sequential = { indexed: latencySummary(samples.indexed), unindexed: latencySummary(samples.unindexed) };
const throughput = {
  indexed: Math.round(median(perSecond.indexed)),
  unindexed: Math.round(median(perSecond.unindexed)),
};
console.log(
  JSON.stringify(
    {
      notifications: total,
      sequential,
      added_by_index: {
        median_ms: ms(sequential.indexed.median_ms - sequential.unindexed.median_ms),
        p99_ms: ms(sequential.indexed.p99_ms - sequential.unindexed.p99_ms),
      },
      throughput_per_second_at_32_in_flight: throughput,
      // Each round's pair ran back to back: the median of their ratios is the least disturbed by load.
      throughput_ratio:
        Math.round(median(perSecond.indexed.map((rate, i) => rate / perSecond.unindexed[i]!)) * 1000) / 1000,
    },
    null,
    2,
  ),
);

for (const receiver of Object.values(receivers)) await receiver.close();
for (const store of Object.values(stores)) await store.close();
const redis = new Redis(redisUrl);
let cursor = "0";
do {
  const [next, keys] = await redis.scan(cursor, "MATCH", `${tag}:*`, "COUNT", 1000);
  cursor = next;
  if (keys.length > 0) await redis.unlink(...keys);
} while (cursor !== "0");
redis.disconnect();
