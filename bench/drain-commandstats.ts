import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { ownRedisServer } from "../test/support/redis.js";
import { redisCpuUs, renewalBodies } from "./queue-bench-parts.js";

/**
 * Redis's own time per drained job, command by command (`INFO commandstats` deltas over the drain: a
 * script's inner calls are counted under their own names, and in its `evalsha` time too), and the
 * server's CPU per job (`INFO cpu`), on a redis-server started for the run: the
 * library's worker (`createWorker` + `redisStore`, concurrency 20, an empty handler) against a plain
 * BullMQ `Worker`, each draining a backlog queued before. `BENCH_BASELINE=<dist>` adds another build.
 *
 *   npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.json npx tsx bench/drain-commandstats.ts
 */
const own = await ownRedisServer();
const url = own.url;
const count = Number(process.env.COUNT ?? 2_000);
const rounds = Number(process.env.ROUNDS ?? 3);
const silent = pino({ level: "silent" });
const redis = new Redis(url);
const headers = { "content-type": "application/json" };
const bodies = renewalBodies("cs");
async function built(dist: string) {
  const [root, bullmq, redisParts] = await Promise.all([
    import(`${dist}/index.js`),
    import(`${dist}/bullmq.js`),
    import(`${dist}/redis.js`),
  ]);
  return { root, bullmq, redis: redisParts };
}
type Stats = Map<string, { calls: number; usec: number }>;
async function commandstats(): Promise<Stats> {
  const info = await redis.info("commandstats");
  const stats: Stats = new Map();
  for (const m of info.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g))
    stats.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  return stats;
}
const cpuUs = () => redisCpuUs(redis);
interface Way {
  name: string;
  fill(n: number): Promise<void>;
  worker(done: () => void): { waitUntilReady(): Promise<unknown>; close(): Promise<unknown> };
}
function libraryWay(name: string, lib: Awaited<ReturnType<typeof built>>): Way {
  const prefix = `cs-${name}`;
  const store = lib.redis.redisStore({ connection: url, prefix: `${prefix}-store:` });
  const queue = lib.bullmq.bullmqQueue({ connection: url, name: "bench", prefix });
  const receiver = lib.root.createReceiver({ logger: silent, idempotency: store, queue });
  return {
    name,
    async fill(n) {
      const list = bodies(n);
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < list.length) {
            const { status } = await receiver.handle({ method: "POST", headers, rawBody: list[next++]! });
            if (status !== 200) throw new Error(`unexpected ${status}`);
          }
        }),
      );
    },
    worker: (done) =>
      lib.bullmq.createWorker({
        connection: url,
        name: "bench",
        prefix,
        concurrency: 20,
        idempotency: store,
        logger: silent,
        onRenew: () => done(),
      }),
  };
}
function plainWay(options: unknown): Way {
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port), maxRetriesPerRequest: null };
  const queue = new Queue("bench", { connection, prefix: "cs-plain", defaultJobOptions: options as never });
  const decoder = new TextDecoder();
  return {
    name: "plain",
    async fill(n) {
      const list = bodies(n);
      await Promise.all(
        list.map((body) => {
          const notification = JSON.parse(decoder.decode(body)) as { id: string; event_type: string };
          return queue.add(notification.event_type, notification, { jobId: notification.id });
        }),
      );
    },
    worker: (done) => new Worker("bench", async () => done(), { connection, prefix: "cs-plain", concurrency: 20 }),
  };
}
const library = await built(new URL("../dist", import.meta.url).pathname);
const ways: Way[] = [libraryWay("library", library)];
if (process.env.BENCH_BASELINE) ways.push(libraryWay("baseline", await built(process.env.BENCH_BASELINE)));
ways.push(plainWay(library.bullmq.DEFAULT_JOB_OPTIONS));

async function drain(way: Way, n: number) {
  let ran = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const worker = way.worker(() => {
    if (++ran === n) finished();
  });
  await worker.waitUntilReady();
  const before = await commandstats();
  const cpuBefore = await cpuUs();
  const started = performance.now();
  await all;
  const seconds = (performance.now() - started) / 1000;
  const cpu = (await cpuUs()) - cpuBefore;
  const after = await commandstats();
  await worker.close();
  const per: Record<string, [number, number]> = {};
  for (const [cmd, s] of after) {
    const b = before.get(cmd) ?? { calls: 0, usec: 0 };
    if (s.calls === b.calls || cmd === "info") continue;
    per[cmd] = [round((s.calls - b.calls) / n), round((s.usec - b.usec) / n)];
  }
  return { rate: Math.round(n / seconds), cpu_us: round(cpu / n), per };
}
const round = (x: number) => Math.round(x * 100) / 100;
for (const way of ways) {
  await way.fill(300);
  await drain(way, 300);
}
const results: Record<string, Array<Awaited<ReturnType<typeof drain>>>> = {};
for (let r = 0; r < rounds; r++) {
  const order = ways.map((_, i) => ways[(i + r) % ways.length]!);
  for (const way of order) await way.fill(count);
  for (const way of order) (results[way.name] ??= []).push(await drain(way, count));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, list] of Object.entries(results)) {
  console.log(
    name,
    JSON.stringify({
      rate: list.map((x) => x.rate),
      cpu_us: list.map((x) => x.cpu_us),
    }),
  );
  const cmds = Object.keys(list[0]!.per);
  for (const cmd of cmds.sort((a, b) => list[0]!.per[b]![1] - list[0]!.per[a]![1]))
    console.log(
      `  ${cmd.padEnd(22)} calls/job ${median(list.map((x) => x.per[cmd]?.[0] ?? 0))}  usec/job ${median(list.map((x) => x.per[cmd]?.[1] ?? 0))}`,
    );
}
redis.disconnect();
await own.stop();
process.exit(0);
