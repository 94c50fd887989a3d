import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { promisify } from "node:util";
import type { HttpBenchmark } from "./http.js";
import { performanceTable, writeTable } from "./readme-table.js";

/**
 * `npm run bench`: every benchmark in its own process, one after another (the machine has few cores
 * and they must not compete), then one table, also written to bench/results/latest.json, and the
 * performance table between the `bench:start`/`bench:end` markers of docs/performance.md or README.md.
 * The core, the HTTP routes, the cost per added KB and the in-flight heap are measured in the same run,
 * so their figures are taken at the same machine load.
 *
 *   BENCH_QUICK=1 (npm run bench:quick): the core, one short HTTP round and the heap only, written to
 *                 bench/results/quick.json; the README is left alone.
 *   BENCH_SKIP=queue,cluster,...: leave out those of the other benchmarks (file names without .ts).
 */
const run = promisify(execFile);
const here = (path: string) => new URL(path, import.meta.url).pathname;

async function bench(script: string, env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<any> {
  const { stdout } = await run(process.execPath, [...nodeFlags, "--import", "tsx", here(script)], {
    env: { ...process.env, BENCH_JSON: "1", ...env },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 30 * 60 * 1000,
  });
  const lines = stdout.trim().split("\n");
  // each script prints its result as the last JSON document on stdout
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines.slice(i).join("\n"));
    } catch {
      // not yet the start of the document
    }
  }
  throw new Error(`${script} printed no JSON result`);
}

const QUICK = process.env.BENCH_QUICK === "1";
const skipped = new Set((process.env.BENCH_SKIP ?? "").split(",").filter(Boolean));
const wanted = (name: string) => !QUICK && !skipped.has(name) && existsSync(here(`./${name}.ts`));

const machine = {
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  memory_gb: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  date: new Date().toISOString(),
  load_before: os.loadavg(),
  load_after: [] as number[],
};
console.error(`benchmarking on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`);

const results: Record<string, unknown> = { machine };
console.error("core throughput ...");
results.core = await bench("./core-throughput.ts", QUICK ? { CORE_BATCH: "3000", CORE_ROUNDS: "3" } : {});
console.error("HTTP side by side ...");
results.http = await bench("./http.ts");
console.error("cost per added kilobyte ...");
results.per_kb = await bench("./per-kilobyte.ts", QUICK ? { PER_KB_ROUNDS: "5" } : {});
console.error("heap per 1,000 notifications in flight ...");
results.heap = await bench("./in-flight-heap.ts", QUICK ? { IN_FLIGHT_ROUNDS: "2" } : {}, ["--expose-gc"]);
machine.load_after = os.loadavg();
if (wanted("steps")) {
  console.error("core step by step ...");
  results.steps = await bench("./steps.ts");
}
if (wanted("queue")) {
  console.error("queue path ...");
  results.queue = await bench("./queue.ts");
}
if (wanted("redis-latency")) {
  console.error("redis latency ...");
  results.redis_latency = await bench("./redis-latency.ts");
}
if (wanted("store-latency")) {
  console.error("memory, redis and postgres stores per notification ...");
  results.store_latency = await bench("./store-latency.ts");
}
if (wanted("postgres-throughput")) {
  console.error("redisStore, postgresStore and a hand-written PostgreSQL route, 32 in flight ...");
  results.postgres_throughput = await bench("./postgres-throughput.ts");
}
if (wanted("console-list")) {
  console.error("the console's list pages at 1,000,000 records, every filter, on postgresStore and redisStore ...");
  results.console_list = await bench("./console-list.ts");
}
if (wanted("ordering-latency")) {
  console.error("latency ordering adds with redis ...");
  results.ordering_latency = await bench("./ordering-latency.ts");
}
if (wanted("hot-subscription-drain")) {
  console.error("one hot subscription's backlog through the queue, ordered and not ...");
  results.hot_subscription_drain = await bench("./hot-subscription-drain.ts");
}
if (wanted("hot-drain-processes")) {
  console.error("the same through two worker processes: one subscription ordered, 1,000 unordered ...");
  results.hot_drain_processes = await bench("./hot-drain-processes.ts");
}
if (wanted("cluster-throughput")) {
  console.error("redisStore on a 3-master cluster against one Redis ...");
  results.cluster = await bench("./cluster-throughput.ts");
}
if (wanted("faults")) {
  console.error("fault suite at scale ...");
  results.faults = await bench("./faults.ts");
}
if (wanted("telemetry-cost")) {
  console.error("OpenTelemetry cost per notification ...");
  results.telemetry = await bench("./telemetry-cost.ts");
}
if (wanted("pg-boss-against-plain")) {
  console.error("pg-boss worker against plain pg-boss work(), the same insert ...");
  results.pg_boss_against_plain = await bench("./pg-boss-against-plain.ts");
}
if (wanted("memory")) {
  console.error("memory after 1,000,000 notifications ...");
  results.memory = await bench("./memory.ts", {}, ["--expose-gc"]);
}

mkdirSync(here("./results"), { recursive: true });
writeFileSync(here(QUICK ? "./results/quick.json" : "./results/latest.json"), `${JSON.stringify(results, null, 2)}\n`);
const { ROUNDS, DURATION } = await import("./http.js");
const table = performanceTable({
  machine,
  rounds: ROUNDS,
  seconds: DURATION,
  core: results.core as any,
  http: results.http as HttpBenchmark,
  heap: results.heap as any,
  perKb: results.per_kb as any,
});
console.log(table);
if (!QUICK) {
  const written = writeTable(table, [here("../docs/performance.md"), here("../README.md")]);
  console.error(written ? `performance table written to ${written}` : "no bench:start/bench:end markers found");
  // Aligned as the formatter aligns Markdown tables, so `npm run lint` passes on the page as written.
  if (written)
    await run(process.execPath, [here("../node_modules/@biomejs/biome/bin/biome"), "format", "--write", written]);
}
