import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type * as root from "merchant-webhooks";
import type * as bullmq from "merchant-webhooks/bullmq";
import type * as redisParts from "merchant-webhooks/redis";
import { pino } from "pino";
import { ownRedisServer, removeKeys } from "../test/support/redis.js";
import { renewalBodies, redisCpuUs as serverCpuUs } from "./queue-bench-parts.js";

/**
 * CPU per notification on the queue path, split between this Node process and the Redis server: the
 * library's receiver (`createReceiver` with `bullmqQueue` + `redisStore`, 32 in flight, no HTTP) and
 * worker (`createWorker`, concurrency 20, an empty handler), against plain BullMQ (`queue.add` with the
 * library's job options; a `Worker` with an empty processor), taking turns in one process, round after
 * round. Node CPU from `process.cpuUsage`, Redis CPU from `INFO cpu` of a redis-server started for the
 * run (`QUEUE_CPU_REDIS_URL` to use another, whose other clients' commands then count too).
 * The library is this repository's build (`npm run build` first); `BENCH_BASELINE=<dist dir>`
 * (`bench/build-baseline.ts`) adds that build's library to every round.
 *
 *   [BENCH_BASELINE=<dist>] [COUNT=2000] [ROUNDS=6] npx tsx bench/queue-cpu.ts
 */
const own = process.env.QUEUE_CPU_REDIS_URL ? undefined : await ownRedisServer();
const url = process.env.QUEUE_CPU_REDIS_URL ?? own!.url;
const count = Number(process.env.COUNT ?? 2_000);
const rounds = Number(process.env.ROUNDS ?? 6);
const IN_FLIGHT = 32;
const CONCURRENCY = 20;
const silent = pino({ level: "silent" });
const headers = { "content-type": "application/json" };

type Library = { root: typeof root; bullmq: typeof bullmq; redis: typeof redisParts };
/** A build of the library: this repository's `dist` (as users run it, like the HTTP servers), or another. */
async function built(dist: string): Promise<Library> {
  const [builtRoot, builtBullmq, builtRedis] = await Promise.all([
    import(`${dist}/index.js`),
    import(`${dist}/bullmq.js`),
    import(`${dist}/redis.js`),
  ]);
  return { root: builtRoot, bullmq: builtBullmq, redis: builtRedis };
}
const libraries: Record<string, Library> = { library: await built(new URL("../dist", import.meta.url).pathname) };
if (process.env.BENCH_BASELINE) libraries.baseline = await built(process.env.BENCH_BASELINE);

const redis = new Redis(url);
const prefix = `bench-queue-cpu-${Date.now().toString(36)}`;
const bodies = renewalBodies(prefix);

/** One way to acknowledge a body and one to drain what was acknowledged, with their CPU per job. */
interface Way {
  name: string;
  acknowledge(body: Uint8Array): Promise<void>;
  drain(done: () => void): { waitUntilReady(): Promise<unknown>; close(): Promise<unknown> };
  close(): Promise<void>;
  cpu: { ack: { node: number[]; redis: number[] }; drain: { node: number[]; redis: number[] } };
}
const cpuRows = () => ({ ack: { node: [], redis: [] }, drain: { node: [], redis: [] } });

function libraryWay(name: string, library: Library): Way {
  const store = library.redis.redisStore({ connection: url, prefix: `${prefix}-${name}-store:` });
  const queue = library.bullmq.bullmqQueue({ connection: url, name: "bench", prefix: `${prefix}-${name}` });
  const receiver = library.root.createReceiver({ logger: silent, idempotency: store, queue });
  return {
    name,
    async acknowledge(body) {
      const { status } = await receiver.handle({ method: "POST", headers, rawBody: body });
      if (status !== 200) throw new Error(`unexpected ${status}`);
    },
    drain: (done) =>
      library.bullmq.createWorker({
        connection: url,
        name: "bench",
        prefix: `${prefix}-${name}`,
        concurrency: CONCURRENCY,
        idempotency: store,
        logger: silent,
        onRenew: () => done(),
      }),
    close: () => receiver.close(),
    cpu: cpuRows(),
  };
}

function plainWay(): Way {
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port || 6379), maxRetriesPerRequest: null };
  const plainPrefix = `${prefix}-plain`;
  const queue = new Queue("bench", {
    connection,
    prefix: plainPrefix,
    defaultJobOptions: libraries.library!.bullmq.DEFAULT_JOB_OPTIONS,
  });
  const decoder = new TextDecoder();
  return {
    name: "plain",
    async acknowledge(body) {
      const notification = JSON.parse(decoder.decode(body)) as { id: string; event_type: string };
      await queue.add(notification.event_type, notification, { jobId: notification.id });
    },
    drain: (done) =>
      new Worker("bench", async () => done(), { connection, prefix: plainPrefix, concurrency: CONCURRENCY }),
    close: () => queue.close(),
    cpu: cpuRows(),
  };
}

const redisCpuUs = () => serverCpuUs(redis);

/** Run `task` over `n` jobs, adding its Node and Redis CPU per job to `into`. */
async function measured(task: () => Promise<void>, into: { node: number[]; redis: number[] }, n = count) {
  const redisBefore = await redisCpuUs();
  const nodeBefore = process.cpuUsage();
  await task();
  const node = process.cpuUsage(nodeBefore);
  into.node.push((node.user + node.system) / n);
  into.redis.push(((await redisCpuUs()) - redisBefore) / n);
}

async function acknowledgeAll(way: Way, list: Uint8Array[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < list.length) await way.acknowledge(list[next++]!);
    }),
  );
}

/** Start the way's worker, and measure from its readiness until it ran `n` jobs (`into`: where to count). */
async function drainAll(way: Way, n = count, into = way.cpu.drain): Promise<void> {
  let ran = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const worker = way.drain(() => {
    if (++ran === n) finished();
  });
  await worker.waitUntilReady();
  await measured(() => all, into, n);
  await worker.close();
}

const ways = [...Object.entries(libraries).map(([name, library]) => libraryWay(name, library)), plainWay()];
// Warm-up, every way, counted nowhere.
for (const way of ways) await acknowledgeAll(way, bodies(300));
for (const way of ways) await drainAll(way, 300, cpuRows().drain);
for (let round = 0; round < rounds; round++) {
  const order = ways.map((_, i) => ways[(i + round) % ways.length]!);
  for (const way of order) {
    const list = bodies(count);
    await measured(() => acknowledgeAll(way, list), way.cpu.ack);
  }
  for (const way of order) await drainAll(way);
}

const median = (values: number[]) => Math.round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);
const result = Object.fromEntries(
  ways.map((way) => [
    way.name,
    Object.fromEntries(
      (["ack", "drain"] as const).map((part) => {
        const { node, redis: server } = way.cpu[part];
        return [part, { node_us: median(node), redis_us: median(server), total_us: median(node) + median(server) }];
      }),
    ),
  ]),
);
for (const way of ways) await way.close();
await removeKeys(redis, prefix);
redis.disconnect();
await own?.stop();
const where = own ? "own redis-server" : "QUEUE_CPU_REDIS_URL";
process.stdout.write(`${JSON.stringify({ count, rounds, redis: where, cpu_per_job: result }, null, 2)}\n`);
process.exit(0);
