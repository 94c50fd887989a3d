import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { promisify } from "node:util";
import type { HttpBenchmark } from "./http.js";

/**
 * `npm run bench`: every benchmark in its own process, one after another (the machine has few cores
 * and they must not compete), then one table, also written to bench/results/latest.json.
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

const machine = {
  cpu: os.cpus()[0]?.model ?? "unknown",
  cores: os.cpus().length,
  memory_gb: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  date: new Date().toISOString(),
};
console.error(`benchmarking on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`);

const results: Record<string, unknown> = { machine };
console.error("core throughput ...");
results.core = await bench("./core-throughput.ts");
console.error("core step by step ...");
results.steps = await bench("./steps.ts");
console.error("HTTP side by side ...");
results.http = await bench("./http.ts");
if (existsSync(here("./queue.ts"))) {
  console.error("queue path ...");
  results.queue = await bench("./queue.ts");
}
if (existsSync(here("./redis-latency.ts"))) {
  console.error("redis latency ...");
  results.redis_latency = await bench("./redis-latency.ts");
}
if (existsSync(here("./ordering-latency.ts"))) {
  console.error("latency ordering adds with redis ...");
  results.ordering_latency = await bench("./ordering-latency.ts");
}
if (existsSync(here("./cluster-throughput.ts"))) {
  console.error("redisStore on a 3-master cluster against one Redis ...");
  results.cluster = await bench("./cluster-throughput.ts");
}
if (existsSync(here("./faults.ts"))) {
  console.error("fault suite at scale ...");
  results.faults = await bench("./faults.ts");
}
console.error("OpenTelemetry cost per notification ...");
results.telemetry = await bench("./telemetry-cost.ts");
console.error("memory after 1,000,000 notifications ...");
results.memory = await bench("./memory.ts", {}, ["--expose-gc"]);

mkdirSync(here("./results"), { recursive: true });
writeFileSync(here("./results/latest.json"), `${JSON.stringify(results, null, 2)}\n`);

const http = results.http as HttpBenchmark;
const core = results.core as {
  us_per_notification: number;
  per_second: number;
  core_to_json_parse: number;
  json_parse_us: number;
};
const ratio = (name: string) => http.ratios.find((row) => row.ratio === name);
const shown = (name: string) => {
  const row = ratio(name);
  return row
    ? `req/s ${row.throughput} (${row.throughput_range.join("–")}), CPU ${row.cpu} (${row.cpu_range.join("–")})`
    : "not measured";
};
console.table(http.rows);
console.table(results.steps as object[]);
console.table({
  "fastify plugin (memory) ÷ hand-written (goal ≥ 1.0)": shown(
    "fastify plugin (memory) ÷ fastify hand-written (memory)",
  ),
  "fastify plugin (redis) ÷ hand-written (goal ≥ 1.0)": shown("fastify plugin (redis) ÷ fastify hand-written (redis)"),
  "express adapter (memory) ÷ hand-written (goal ≥ 1.0)": shown(
    "express adapter (memory) ÷ express hand-written (memory)",
  ),
  "express adapter (redis) ÷ hand-written": shown("express adapter (redis) ÷ express hand-written (redis)"),
  "fastify plugin (memory) ÷ bare fastify (goal ≥ 0.6)": shown("fastify plugin (memory) ÷ fastify bare"),
  "express adapter (memory) ÷ bare express": shown("express adapter (memory) ÷ express bare"),
  "core per notification ÷ JSON.parse (goal ≤ 3)": `${core.core_to_json_parse} (${core.us_per_notification} µs ÷ ${core.json_parse_us} µs)`,
  "core notifications/s (one core, CPU time)": core.per_second,
  "memory store RSS after 1M (MB)": (results.memory as any).samples.at(-1).rss_mb,
  "memory store heap after 1M (MB)": (results.memory as any).samples.at(-1).heap_mb,
  "redisStore on 3-master cluster / one Redis (throughput)": (results.cluster as any)
    ?.throughput_ratio_cluster_to_single,
  "p99 the cluster adds, one at a time (ms)": (results.cluster as any)?.p99_added_by_cluster_ms.one_at_a_time,
  "latency ordering adds with redisStore, median / p99 (ms)": `${(results.ordering_latency as any)?.added_by_ordering.median_ms} / ${(results.ordering_latency as any)?.added_by_ordering.p99_ms}`,
  "µs per notification, no OpenTelemetry SDK → traces + metrics": `${(results.telemetry as any).us_per_notification_without_sdk} → ${(results.telemetry as any).us_per_notification_with_traces_and_metrics}`,
});
