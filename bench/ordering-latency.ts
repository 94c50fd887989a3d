import { Redis } from "ioredis";
import { createReceiver, type Receiver } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { pino } from "pino";
import { removeKeys } from "../test/support/redis.js";
import { latencySummary, ms } from "./latency-stats.js";
import { JSON_HEADERS } from "./renewal-body.js";

/**
 * The latency `ordering: true` adds per notification with `redisStore`: the core receiver with ordering
 * against the same receiver without it, on one Redis, one notification at a time, taking turns
 * notification by notification so drift in the machine's load affects both alike. Both make the same
 * two round trips (claim, completion); ordering adds the subscription's key to each script, the
 * position check and the position parse. Notifications go to 1,000 subscriptions, each later than the
 * last of its subscription (the common case: in order, nothing stale).
 *
 *   npx tsx bench/ordering-latency.ts            (REDIS_URL, ORDERING_LATENCY_NOTIFICATIONS to change)
 */
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const total = Number(process.env.ORDERING_LATENCY_NOTIFICATIONS ?? 5_000);
const warmUp = 1_000;
const SUBSCRIPTIONS = 1_000;

const prefix = `mwbench-ordering-${process.pid}-${Date.now().toString(36)}:`;
const stores = {
  plain: redisStore({ connection: url, prefix: `${prefix}plain:` }),
  ordered: redisStore({ connection: url, prefix: `${prefix}ordered:` }),
};
const logger = pino({ level: "silent" });
const receivers: Record<keyof typeof stores, Receiver> = {
  plain: createReceiver({ logger, idempotency: stores.plain, onRenew: () => {} }),
  ordered: createReceiver({ logger, idempotency: stores.ordered, ordering: true, onRenew: () => {} }),
};
const samples: Record<keyof typeof stores, number[]> = { plain: [], ordered: [] };

const encoder = new TextEncoder();
const base = buildNotification("SUBSCRIPTION_RENEW");
/** The i-th notification: subscription i mod 1,000, one second later than that subscription's last. */
const body = (name: string, i: number) => {
  const update_time = new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString();
  const resource = { ...base.resource, id: `SUB-${i % SUBSCRIPTIONS}`, update_time };
  return encoder.encode(JSON.stringify({ ...base, id: `${name}-${i}`, resource }));
};

for (let i = 0; i < warmUp + total; i++) {
  for (const name of ["plain", "ordered"] as const) {
    const rawBody = body(name, i);
    const started = performance.now();
    const response = await receivers[name].handle({ method: "POST", headers: JSON_HEADERS, rawBody });
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`${name}: unexpected ${response.status} ${response.body}`);
    if (i >= warmUp) samples[name].push(elapsed);
  }
}

const plain = latencySummary(samples.plain);
const ordered = latencySummary(samples.ordered);
console.log(
  JSON.stringify(
    {
      notifications: total,
      subscriptions: SUBSCRIPTIONS,
      redis_without_ordering: plain,
      redis_with_ordering: ordered,
      added_by_ordering: {
        median_ms: ms(ordered.median_ms - plain.median_ms),
        p99_ms: ms(ordered.p99_ms - plain.p99_ms),
      },
      node: process.version,
    },
    null,
    2,
  ),
);

// Leave Redis as it was found.
const cleaner = new Redis(url);
await removeKeys(cleaner, prefix);
cleaner.disconnect();
await Promise.all(Object.values(stores).map((store) => store.close()));
