import { Redis } from "ioredis";
import { createReceiver, type Receiver } from "merchant-webhooks";
import { bullmqQueue } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { pino } from "pino";
import { removeKeys } from "../test/support/redis.js";
import { hotWorker } from "./hot-worker.js";
import { JSON_HEADERS } from "./renewal-body.js";

/**
 * How fast a backlog of one hot subscription drains through a BullMQ queue with two workers
 * (concurrency 20 each) and a handler that does one Redis write: with `ordering: true`, in position
 * order, next to the same notifications without ordering, in the same run. The backlog is queued
 * first (in position order, as a platform replaying after an outage sends it); the clock runs from
 * the workers' start to the last handler call. In-process (no queue, the handler run by the receiver),
 * the same notifications are sent one after another in position order, each waiting for its answer,
 * with and without ordering.
 *
 *   npx tsx bench/hot-subscription-drain.ts     (REDIS_URL, HOT_DRAIN_NOTIFICATIONS, HOT_DRAIN_ROUNDS)
 */
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const total = Number(process.env.HOT_DRAIN_NOTIFICATIONS ?? 1_000);
const rounds = Number(process.env.HOT_DRAIN_ROUNDS ?? 2);
const prefix = `mwbench-hot-${process.pid}-${Date.now().toString(36)}`;
const logger = pino({ level: "silent" });
const redis = new Redis(url);
const encoder = new TextEncoder();
const base = buildNotification("SUBSCRIPTION_RENEW");

/** The run's backlog of one subscription, one delivery after another in position order, each answered 200. */
async function sendBacklog(receiver: Receiver, run: string, label: string): Promise<void> {
  for (let i = 0; i < total; i++) {
    const update_time = new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString();
    const body = { ...base, id: `${run}-${i}`, resource: { ...base.resource, id: `SUB-${run}`, update_time } };
    const response = await receiver.handle({
      method: "POST",
      headers: JSON_HEADERS,
      rawBody: encoder.encode(JSON.stringify(body)),
    });
    if (response.status !== 200) throw new Error(`${label}: unexpected ${response.status} ${response.body}`);
  }
}

async function drain(mode: "ordered" | "unordered", round: number): Promise<{ rate: number; stale: number }> {
  const run = `${prefix}-${mode}-${round}`;
  const store = redisStore({ connection: url, prefix: `{${run}}idem:` });
  const queue = bullmqQueue({ connection: url, name: "hot", prefix: `{${run}}` });
  const receiver = createReceiver({ logger, idempotency: store, queue, ordering: mode === "ordered" });
  await sendBacklog(receiver, run, mode);
  let handled = 0;
  let stale = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const count = () => {
    if (++handled === total) done();
  };
  const started = performance.now();
  const workers = [0, 1].map(() =>
    hotWorker(
      { url, run, store, logger },
      async (notification) => {
        await redis.set(`{${run}}effect:${notification.id}`, "1");
        count();
      },
      async () => {
        stale++;
        count();
      },
    ),
  );
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(workers.map((worker) => worker.close({ timeoutMs: 5_000 })));
  await receiver.close();
  await store.close();
  await removeKeys(redis, `{${run}}`);
  return { rate: total / seconds, stale };
}

/** The backlog sent to a receiver that runs the handler itself, one delivery at a time, in position order. */
async function inProcess(mode: "ordered" | "unordered", round: number): Promise<{ rate: number; stale: number }> {
  const run = `${prefix}-direct-${mode}-${round}`;
  const store = redisStore({ connection: url, prefix: `{${run}}idem:` });
  let stale = 0;
  const receiver = createReceiver({
    logger,
    idempotency: store,
    ordering: mode === "ordered",
    onRenew: async (notification) => {
      await redis.set(`{${run}}effect:${notification.id}`, "1");
    },
    onStale: () => {
      stale++;
    },
  });
  const started = performance.now();
  await sendBacklog(receiver, run, `in-process ${mode}`);
  const seconds = (performance.now() - started) / 1000;
  await receiver.close();
  await store.close();
  await removeKeys(redis, `{${run}}`);
  return { rate: total / seconds, stale };
}

const results: Record<string, number[]> = { ordered: [], unordered: [], direct_ordered: [], direct_unordered: [] };
let staleTotal = 0;
for (let round = 0; round < rounds; round++) {
  // Taking turns, so drift in the machine's load affects both alike.
  for (const mode of ["unordered", "ordered"] as const) {
    const { rate, stale } = await drain(mode, round);
    results[mode]!.push(rate);
    if (mode === "ordered") staleTotal += stale;
    console.error(`${mode} round ${round + 1}: ${rate.toFixed(1)}/s`);
  }
  for (const mode of ["unordered", "ordered"] as const) {
    const { rate, stale } = await inProcess(mode, round);
    results[`direct_${mode}`]!.push(rate);
    if (mode === "ordered") staleTotal += stale;
    console.error(`in-process ${mode} round ${round + 1}: ${rate.toFixed(1)}/s`);
  }
}
redis.disconnect();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ordered = median(results.ordered!);
const unordered = median(results.unordered!);
console.log(
  JSON.stringify(
    {
      notifications: total,
      workers: 2,
      concurrency: 20,
      ordered_per_s: Math.round(ordered * 10) / 10,
      unordered_per_s: Math.round(unordered * 10) / 10,
      ratio: Math.round((ordered / unordered) * 100) / 100,
      in_process_ordered_per_s: Math.round(median(results.direct_ordered!) * 10) / 10,
      in_process_unordered_per_s: Math.round(median(results.direct_unordered!) * 10) / 10,
      in_process_ratio: Math.round((median(results.direct_ordered!) / median(results.direct_unordered!)) * 100) / 100,
      ordered_stale: staleTotal,
    },
    null,
    2,
  ),
);
