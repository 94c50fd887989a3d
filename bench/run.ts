import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { promisify } from "node:util";

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
if (existsSync(here("./cluster-throughput.ts"))) {
  console.error("redisStore on a 3-master cluster against one Redis ...");
  results.cluster = await bench("./cluster-throughput.ts");
}
if (existsSync(here("./faults.ts"))) {
  console.error("fault suite at scale ...");
  results.faults = await bench("./faults.ts");
}
console.error("memory after 1,000,000 notifications ...");
results.memory = await bench("./memory.ts", {}, ["--expose-gc"]);

mkdirSync(here("./results"), { recursive: true });
writeFileSync(here("./results/latest.json"), `${JSON.stringify(results, null, 2)}\n`);

const http = results.http as { name: string; requests_per_second: number; p50_ms: number; p99_ms: number }[];
const rps = (name: string) => http.find((row) => row.name.startsWith(name))?.requests_per_second;
const ratio = (a?: number, b?: number) => (a && b ? +(a / b).toFixed(2) : undefined);
console.table(http);
console.table({
  "core notifications/s (one core)": (results.core as any).per_second,
  "core µs per notification": (results.core as any).us_per_notification,
  "express adapter / bare express": ratio(rps("express subscriptionWebhook"), rps("express bare")),
  "fastify plugin (memory) / bare fastify": ratio(rps("fastify plugin (memory)"), rps("fastify bare")),
  "fastify plugin (redis) / bare fastify": ratio(rps("fastify plugin (redis)"), rps("fastify bare")),
  "memory store RSS after 1M (MB)": (results.memory as any).samples.at(-1).rss_mb,
  "memory store heap after 1M (MB)": (results.memory as any).samples.at(-1).heap_mb,
  "redisStore on 3-master cluster / one Redis (throughput)": (results.cluster as any)?.throughput_ratio_cluster_to_single,
  "p99 the cluster adds, one at a time (ms)": (results.cluster as any)?.p99_added_by_cluster_ms.one_at_a_time,
});
