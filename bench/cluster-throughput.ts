import { createReceiver, type Receiver } from "merchant-webhooks";
import { type RedisStore, redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";
import { clusterClient } from "../test/cluster/fixtures/cluster-client.js";
import { startTestCluster } from "../test/cluster/fixtures/redis-cluster.js";
import { ownRedisServer } from "../test/support/redis.js";
import { JSON_HEADERS, renewalBody } from "./renewal-body.js";

/**
 * `redisStore` on a Redis Cluster of 3 masters (each with a replica) against the same store on one
 * Redis, side by side: the core receiver with a no-op handler, so each notification costs its claim
 * and its completion. Both Redis setups are started here on loopback with the same settings (no
 * persistence), so neither competes with other work on a shared Redis.
 *
 *   - throughput: 32 notifications in flight, 1,000 a round, fifteen rounds each, taking turns; the
 *     ratio is the median of each cluster round's rate over the single-Redis round just before it,
 *     so a change in the machine's load between rounds weighs on both sides alike
 *   - latency: one notification at a time, 2,000 each after 500 warm-up, taking turns notification by notification
 *
 *   npx tsx bench/cluster-throughput.ts        (CLUSTER_BENCH_NOTIFICATIONS to change the round size)
 */
const perRound = Number(process.env.CLUSTER_BENCH_NOTIFICATIONS ?? 1_000);
const rounds = 15;
const inFlight = 32;
const sequential = 2_000;
const warmUp = 500;

let counter = 0;
const nextBody = () => renewalBody(`bench-${++counter}`);

const started = await startTestCluster();
if (!started.ok) throw new Error(started.reason);
const cluster = started.cluster;
const single = await ownRedisServer();
const clusterConnection = clusterClient(cluster.startupNodes);
await new Promise<void>((resolve) => clusterConnection.once("ready", () => resolve()));

const logger = pino({ level: "silent" });
const stores: Record<"single" | "cluster", RedisStore> = {
  single: redisStore({ connection: single.url }),
  cluster: redisStore({ connection: clusterConnection }),
};
const receivers: Record<keyof typeof stores, Receiver> = {
  single: createReceiver({ logger, idempotency: stores.single, onRenew: () => {} }),
  cluster: createReceiver({ logger, idempotency: stores.cluster, onRenew: () => {} }),
};
type Setup = keyof typeof receivers;

async function handleOne(setup: Setup): Promise<number> {
  const rawBody = nextBody();
  const start = performance.now();
  const response = await receivers[setup].handle({ method: "POST", headers: JSON_HEADERS, rawBody });
  const elapsed = performance.now() - start;
  if (response.status !== 200) throw new Error(`${setup}: unexpected ${response.status} ${response.body}`);
  return elapsed;
}

/** One round: `perRound` notifications with `inFlight` at a time; notifications per second and each one's latency. */
async function round(setup: Setup): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = [];
  let left = perRound;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (left-- > 0) latencies.push(await handleOne(setup));
    }),
  );
  return { perSecond: perRound / ((performance.now() - start) / 1000), latencies };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const ms = (value: number) => Math.round(value * 1000) / 1000;
const median = (values: number[]) => quantile(values, 0.5);

try {
  const throughput: Record<Setup, number[]> = { single: [], cluster: [] };
  const underLoad: Record<Setup, number[]> = { single: [], cluster: [] };
  await round("single"); // warm-up: connections, script loading, JIT
  await round("cluster");
  for (let i = 0; i < rounds; i++) {
    for (const setup of ["single", "cluster"] as const) {
      const result = await round(setup);
      throughput[setup].push(result.perSecond);
      underLoad[setup].push(...result.latencies);
    }
  }
  const alone: Record<Setup, number[]> = { single: [], cluster: [] };
  for (let i = 0; i < warmUp + sequential; i++) {
    for (const setup of ["single", "cluster"] as const) {
      const elapsed = await handleOne(setup);
      if (i >= warmUp) alone[setup].push(elapsed);
    }
  }

  const summary = (setup: Setup) => ({
    per_second: Math.round(median(throughput[setup])),
    rounds_per_second: throughput[setup].map(Math.round),
    in_flight_p50_ms: ms(quantile(underLoad[setup], 0.5)),
    in_flight_p99_ms: ms(quantile(underLoad[setup], 0.99)),
    one_at_a_time_p50_ms: ms(quantile(alone[setup], 0.5)),
    one_at_a_time_p99_ms: ms(quantile(alone[setup], 0.99)),
  });
  const one = summary("single");
  const three = summary("cluster");
  console.log(
    JSON.stringify(
      {
        notifications_per_round: perRound,
        in_flight: inFlight,
        single_redis: one,
        cluster_3_masters: three,
        throughput_ratio_cluster_to_single: +median(
          throughput.cluster.map((rate, i) => rate / throughput.single[i]!),
        ).toFixed(2),
        p99_added_by_cluster_ms: {
          in_flight: ms(three.in_flight_p99_ms - one.in_flight_p99_ms),
          one_at_a_time: ms(three.one_at_a_time_p99_ms - one.one_at_a_time_p99_ms),
        },
        node: process.version,
      },
      null,
      2,
    ),
  );
} finally {
  await Promise.all([receivers.single.close(), receivers.cluster.close()]);
  await Promise.all([stores.single.close(), stores.cluster.close()]);
  clusterConnection.disconnect();
  await cluster.stop();
  await single.stop();
}
