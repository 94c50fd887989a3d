import { type ChildProcess, fork } from "node:child_process";
import { Redis } from "ioredis";
import { createReceiver, type Receiver } from "merchant-webhooks";
import { bullmqQueue } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { pino } from "pino";
import { ownRedisServer, removeKeys, sleep } from "../test/support/redis.js";
import { JSON_HEADERS } from "./renewal-body.js";

/**
 * The queued drain as a merchant runs it: one receiver (this process) and two `createWorker`
 * processes at concurrency 20. Ordered: 1,000 notifications of one subscription with `ordering: true`;
 * unordered: 1,000 notifications of 1,000 subscriptions without it; rounds taking turns, so drift in the
 * machine's load affects both alike. Each backlog is queued first, in position order; the clock runs
 * from the workers' "go" (their processes already loaded and connected) to the last handler's write.
 * Every run is checked: each notification ran once, the ordered one in position order, none stale.
 *
 * It runs on a redis-server of its own (unless HOT_DRAIN_REDIS_URL names one). After the timed rounds,
 * one untimed round of each mode is watched with MONITOR to count the commands the receiver and the
 * workers send per notification (a script's own calls left out, and the handler's write). A command
 * is at most one round trip: pipelined ones share one, so this is the upper bound.
 *
 *   npx tsx bench/hot-drain-processes.ts   (HOT_DRAIN_NOTIFICATIONS, HOT_DRAIN_ROUNDS, HOT_DRAIN_REDIS_URL)
 */
const total = Number(process.env.HOT_DRAIN_NOTIFICATIONS ?? 1_000);
const rounds = Number(process.env.HOT_DRAIN_ROUNDS ?? 3);
const own = process.env.HOT_DRAIN_REDIS_URL ? undefined : await ownRedisServer();
const url = process.env.HOT_DRAIN_REDIS_URL ?? own!.url;
const prefix = `mwbench-procs-${process.pid}-${Date.now().toString(36)}`;
const logger = pino({ level: "silent" });
const redis = new Redis(url);
const encoder = new TextEncoder();
const base = buildNotification("SUBSCRIPTION_RENEW");
const workerScript = new URL("./hot-drain-worker.ts", import.meta.url).pathname;

type Mode = "ordered" | "unordered";

async function sendBacklog(receiver: Receiver, run: string, mode: Mode, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const update_time = new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString();
    const subscription = mode === "ordered" ? `SUB-${run}` : `SUB-${run}-${i}`;
    const body = { ...base, id: `${run}-${i}`, resource: { ...base.resource, id: subscription, update_time } };
    const response = await receiver.handle({
      method: "POST",
      headers: JSON_HEADERS,
      rawBody: encoder.encode(JSON.stringify(body)),
    });
    if (response.status !== 200) throw new Error(`${mode}: unexpected ${response.status} ${response.body}`);
  }
}

function startWorker(run: string): Promise<ChildProcess> {
  const child = fork(workerScript, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, HOT_DRAIN_URL: url, HOT_DRAIN_RUN: run },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`worker process exited with ${code} before it was ready`)));
  });
}

/** Counts of the commands clients send, by phase, while a MONITOR watches (see `watchCommands`). */
type Watch = { phase: "receiver" | "worker"; counts: Record<"receiver" | "worker", Record<string, number>> };

/**
 * Count each command a client sends, not a script's own calls (source "lua") nor this process's polls
 * and reads, nor the handler's write. The drain's start is marked with an ECHO in the same stream, so
 * each command is counted on the side it was sent before or after the start.
 */
async function watchCommands(): Promise<{ watch: Watch; stop: () => void }> {
  const own = /addr=(\S+)/.exec(String(await redis.client("INFO")))![1]!;
  const watch: Watch = { phase: "receiver", counts: { receiver: {}, worker: {} } };
  const monitor = await redis.monitor();
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    const name = String(args[0]).toLowerCase();
    if (source === own) {
      if (name === "echo" && args[1] === "drain-start") watch.phase = "worker";
      return;
    }
    if (source === "lua" || (name === "rpush" && String(args[1]).endsWith("effects"))) return;
    const counts = watch.counts[watch.phase];
    counts[name] = (counts[name] ?? 0) + 1;
  });
  return { watch, stop: () => monitor.disconnect() };
}

function perNotification(counts: Record<string, number>, n: number) {
  const round = (value: number) => Math.round((value / n) * 100) / 100;
  const sum = Object.values(counts).reduce((a, b) => a + b, 0);
  const byCommand = Object.fromEntries(
    Object.entries(counts)
      .sort(([, a], [, b]) => b - a)
      .map(([name, calls]) => [name, round(calls)]),
  );
  return { per_notification: round(sum), by_command: byCommand };
}

async function drain(mode: Mode, round: number, n = total, watch?: Watch): Promise<number> {
  const run = `${prefix}-${mode}-${round}`;
  const store = redisStore({ connection: url, prefix: `{${run}}idem:` });
  const queue = bullmqQueue({ connection: url, name: "hot", prefix: `{${run}}` });
  const receiver = createReceiver({ logger, idempotency: store, queue, ordering: mode === "ordered" });
  const workers = await Promise.all([startWorker(run), startWorker(run)]);
  await sendBacklog(receiver, run, mode, n);
  const effects = `{${run}}effects`;
  if (watch) await redis.echo("drain-start");
  const started = performance.now();
  for (const worker of workers) worker.send("go");
  while ((await redis.llen(effects)) < n) await sleep(5);
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(
    workers.map((worker) => {
      const exited = new Promise((resolve) => worker.once("exit", resolve));
      worker.send("close");
      return exited;
    }),
  );
  const ran = await redis.lrange(effects, 0, -1);
  await receiver.close();
  await store.close();
  await removeKeys(redis, `{${run}}`);
  const stale = ran.filter((id) => id.startsWith("stale:")).length;
  const once = new Set(ran).size === n && ran.length === n;
  const inOrder = ran.every((id, i) => id === `${run}-${i}`);
  if (!once || stale > 0 || (mode === "ordered" && !inOrder))
    throw new Error(`${mode} round ${round + 1}: ${ran.length} runs, ${new Set(ran).size} ids, ${stale} stale`);
  return n / seconds;
}

const rates: Record<Mode, number[]> = { ordered: [], unordered: [] };
for (let round = 0; round < rounds; round++) {
  for (const mode of ["unordered", "ordered"] as const) {
    const rate = await drain(mode, round);
    rates[mode].push(rate);
    console.error(`${mode} round ${round + 1}: ${rate.toFixed(1)}/s`);
  }
}
// Untimed: MONITOR slows Redis down. Only on the bench's own Redis: on a shared one it sees others' commands.
const COUNTED = 200;
const commands: Record<string, unknown> = {};
for (const mode of own ? (["unordered", "ordered"] as const) : []) {
  const { watch, stop } = await watchCommands();
  await drain(mode, rounds, COUNTED, watch);
  stop();
  commands[mode] = {
    receiver: perNotification(watch.counts.receiver, COUNTED),
    workers: perNotification(watch.counts.worker, COUNTED),
  };
}
redis.disconnect();
await own?.stop();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ratios = rates.ordered.map((rate, i) => Math.round((rate / rates.unordered[i]!) * 100) / 100);
console.log(
  JSON.stringify(
    {
      notifications: total,
      worker_processes: 2,
      concurrency: 20,
      ordered_per_s: rates.ordered.map((rate) => Math.round(rate)),
      unordered_per_s: rates.unordered.map((rate) => Math.round(rate)),
      ratio_per_round: ratios,
      median_ratio: median(ratios),
      redis: own ? "own redis-server" : "HOT_DRAIN_REDIS_URL",
      commands_per_notification: commands,
    },
    null,
    2,
  ),
);
