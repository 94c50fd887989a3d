import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

/**
 * HTTP side by side in one run: each server in its own process (one core for the server, one for
 * autocannon), the same ~1.5 KB renewal with a unique id per request, bare route vs adapter.
 */
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

const template = JSON.stringify(JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8"))).replace(
  /^\{"id":"[^"]*"/,
  '{"id":"[<id>]"',
);

export interface HttpResult {
  name: string;
  requests_per_second: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
}

async function start(server: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ["--import", "tsx", new URL(`./servers/${server}.ts`, import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${server} exited with ${code}`)));
  });
  return { child, port: JSON.parse(line).port };
}

async function load(port: number): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${port}/hook`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: template,
    idReplacement: true,
    connections: CONNECTIONS,
    duration: DURATION,
  });
}

export async function measure(name: string, server: string, env?: Record<string, string>): Promise<HttpResult> {
  const { child, port } = await start(server, env);
  try {
    await autocannon({ url: `http://127.0.0.1:${port}/hook`, method: "POST", headers: { "content-type": "application/json" }, body: template, idReplacement: true, connections: 10, duration: 2 });
    const result = await load(port);
    return {
      name,
      requests_per_second: Math.round(result.requests.average),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      non_2xx: result.non2xx,
      errors: result.errors,
    };
  } finally {
    child.kill("SIGTERM");
  }
}

export const fastifyAdapterAvailable = () => existsSync(new URL("../adapters/fastify.ts", import.meta.url));
export const redisStoreAvailable = () => existsSync(new URL("../src/redis/index.ts", import.meta.url));

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Target = [name: string, server: string, env?: Record<string, string>];

/**
 * Each target measured ROUNDS times, the rounds interleaved (bare, adapter, bare, adapter, ...) so a
 * slow spell of a shared machine lands on both sides; each row is the round with the median req/s.
 */
async function compare(targets: Target[]): Promise<HttpResult[]> {
  const rounds = new Map<string, HttpResult[]>(targets.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, server, env] of targets) rounds.get(name)!.push(await measure(name, server, env));
  }
  return targets.map(([name]) => {
    const sorted = rounds.get(name)!.sort((a, b) => a.requests_per_second - b.requests_per_second);
    return sorted[Math.floor(sorted.length / 2)]!;
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows: HttpResult[] = [];
  rows.push(...(await compare([["express bare (express.json)", "express-bare"], ["express subscriptionWebhook (memory)", "express-adapter"]])));
  const fastify: Target[] = [["fastify bare (JSON route)", "fastify-bare"]];
  if (fastifyAdapterAvailable()) {
    fastify.push(["fastify plugin (memory)", "fastify-adapter"]);
    if (redisStoreAvailable()) fastify.push(["fastify plugin (redis)", "fastify-adapter", { BENCH_STORE: "redis" }]);
  }
  rows.push(...(await compare(fastify)));
  if (process.env.BENCH_JSON) console.log(JSON.stringify(rows));
  else console.table(rows);
}
