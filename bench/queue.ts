import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";
import { againstPlainBullmq } from "./queue-against-bullmq.js";

/**
 * The queue path on one Redis: how long a receiver takes to acknowledge a notification with
 * `bullmqQueue` + `redisStore` (claim, add, mark queued), one at a time and 32 at once; then how many
 * queued notifications per second one and two worker processes (concurrency 20 each) run, each
 * handler doing one Redis INCR as a stand-in for a small write; then the same path against plain
 * BullMQ (`./queue-against-bullmq.ts`, `ROUNDS` rounds, 3 by default). `npx tsx bench/queue.ts`;
 * `QUEUE_PARTS=plain` runs only the comparison with plain BullMQ.
 */
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const count = Number(process.env.COUNT ?? 5_000);
const concurrency = Number(process.env.CONCURRENCY ?? 20);
const silent = () => pino({ level: "silent" });
const plainOnly = process.env.QUEUE_PARTS === "plain";

if (process.argv[2] === "--worker") {
  // A worker process: run the queue named in argv until told to stop.
  const [, , , name, prefix] = process.argv as [string, string, string, string, string];
  const redis = new Redis(url);
  const worker = createWorker({
    connection: url,
    name,
    prefix,
    concurrency,
    idempotency: redisStore({ connection: url, prefix: `${prefix}-store:` }),
    logger: silent(),
    onRenew: async () => void (await redis.incr(`${prefix}-done`)),
  });
  await worker.waitUntilReady();
  process.stdout.write("ready\n");
  process.once("SIGTERM", () => void worker.close({ timeoutMs: 5_000 }).then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
  const template = JSON.stringify(
    JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8")),
  );
  const encoder = new TextEncoder();
  const prefix = `bench-queue-${Date.now().toString(36)}`;
  const redis = new Redis(url);
  let batch = 0;
  const bodies = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      encoder.encode(template.replace(/"id":\s*"[^"]*"/, `"id":"${prefix}-${batch}-${i}"`)),
    );

  const store = redisStore({ connection: url, prefix: `${prefix}-store:` });
  const queue = bullmqQueue({ connection: url, name: "bench", prefix });
  const receiver = createReceiver({ logger: silent(), idempotency: store, queue });
  const headers = { "content-type": "application/json" };

  /** Acknowledge `list` with `inFlight` requests at a time; the latency of each, in ms. */
  async function acknowledge(list: Uint8Array[], inFlight: number): Promise<{ latencies: number[]; seconds: number }> {
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < list.length) {
          const body = list[next++]!;
          const t = performance.now();
          const response = await receiver.handle({ method: "POST", headers, rawBody: body });
          latencies.push(performance.now() - t);
          if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${response.body}`);
        }
      }),
    );
    return { latencies, seconds: (performance.now() - started) / 1000 };
  }

  const summary = ({ latencies, seconds }: { latencies: number[]; seconds: number }) => {
    const sorted = [...latencies].sort((a, b) => a - b);
    const at = (q: number) => +sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
    return {
      notifications: sorted.length,
      median_ms: at(0.5),
      p99_ms: at(0.99),
      per_second: Math.round(sorted.length / seconds),
    };
  };

  /** Queue `n` notifications, start `workers` processes, and time until every handler ran. */
  async function throughput(workers: number, n: number) {
    batch++;
    await acknowledge(bodies(n), 32);
    await redis.set(`${prefix}-done`, 0);
    const script = fileURLToPath(import.meta.url);
    const children = Array.from({ length: workers }, () =>
      spawn(process.execPath, ["--import", "tsx", script, "--worker", "bench", prefix], {
        stdio: ["ignore", "pipe", "inherit"],
        env: process.env,
      }),
    );
    const started = await Promise.all(
      children.map(
        (child) => new Promise<number>((resolve) => child.stdout!.once("data", () => resolve(performance.now()))),
      ),
    );
    const from = Math.max(...started);
    while (Number(await redis.get(`${prefix}-done`)) < n) await new Promise((resolve) => setTimeout(resolve, 5));
    const seconds = (performance.now() - from) / 1000;
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            child.once("exit", resolve);
            child.kill("SIGTERM");
          }),
      ),
    );
    return { workers, concurrency_each: concurrency, notifications: n, per_second: Math.round(n / seconds) };
  }

  let own: Record<string, unknown> = {};
  if (!plainOnly) {
    await acknowledge(bodies(500), 8); // warm-up: connections, scripts, JIT
    batch++;
    const sequential = summary(await acknowledge(bodies(count), 1));
    batch++;
    const concurrent = summary(await acknowledge(bodies(count), 32));
    await queue.queue.drain();
    own = {
      acknowledgement: { one_at_a_time: sequential, thirty_two_in_flight: concurrent },
      worker_throughput: [await throughput(1, count), await throughput(2, count)],
    };
  }
  const plain = await againstPlainBullmq({
    url,
    prefix: `${prefix}-vs`,
    count,
    rounds: Number(process.env.ROUNDS ?? 3),
    concurrency,
    bodies: (n) => {
      batch++;
      return bodies(n);
    },
  });

  await receiver.close();
  await store.close?.();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
  redis.disconnect();

  const result = {
    ...own,
    against_plain_bullmq: plain,
    machine: `${os.cpus()[0]?.model ?? "unknown cpu"}, ${os.cpus().length} cores, Node ${process.version}, Redis on the same machine`,
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
