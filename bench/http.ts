import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { autocannonTemplate } from "./notification-body.js";

/**
 * HTTP side by side in one run: each server in its own process (one core for the server, one for
 * autocannon), the same ~2.2 KB renewal with a unique id per request. Per framework (Fastify, Express,
 * Node's http): the bare route (parse JSON, answer), the hand-written route doing the library's work
 * the way a user would (`servers/hand-written.ts`), the same route with the library's guarantees added
 * ("same guarantees": the claim let go when the handler throws, a bounded `Map`, a body limit, a
 * handler time limit, 409 for an id in progress, a hash of the key-sorted payload for the 422) and the
 * library's adapter, each on the memory store and on Redis. After
 * the rounds, each target runs once more at 80% of its median saturating rate, for its p99 latency
 * below saturation.
 *
 * The machine is shared, so wall-clock throughput is noisy: the targets of a framework take turns,
 * round after round, and every ratio is taken between targets of the same round. Beside req/s, each
 * server reports its own CPU time, so the CPU per request over the measured window is known; it
 * depends much less on what else the machine is doing.
 *
 *   BENCH_SECONDS (6), BENCH_ROUNDS (5), BENCH_CONNECTIONS (50); BENCH_QUICK=1: 1 round of 3 s, for iterating
 *   BENCH_ONLY=<regexp>       only the targets whose name matches
 *   BENCH_NODE_FLAGS="<flags>" Node flags for the servers (`--prof`, `--trace-gc`), to profile one
 *   BENCH_BASELINE=<dist dir> also run each library target on that build (`bench/build-baseline.ts`)
 */
const QUICK = process.env.BENCH_QUICK === "1";
export const DURATION = Number(process.env.BENCH_SECONDS ?? (QUICK ? 3 : 6));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 5));

export interface Sample {
  requests_per_second: number;
  p50_ms: number;
  p99_ms: number;
  /** Server CPU (user + system) over the measured window, divided by the requests it received. */
  cpu_us_per_request: number;
  /** Of which user time (JavaScript, GC, serialising) and system time (the kernel: sockets, writes). */
  cpu_user_us: number;
  cpu_system_us: number;
  non_2xx: number;
  errors: number;
}

export interface HttpRow extends Sample {
  name: string;
  /** Lowest and highest req/s over the rounds (the row shows the median round). */
  rps_range: [number, number];
  /** p99 latency (ms) with the load held at 80% of the median req/s, and the rate that was held. */
  p99_at_80pct_ms?: number;
  rate_at_80pct?: number;
}

export interface RatioRow {
  ratio: string;
  /** req/s of the library route ÷ req/s of the reference, median of the rounds, then lowest and highest. */
  throughput: number;
  throughput_range: [number, number];
  /** CPU per request of the reference ÷ that of the library route (above 1: the library costs less). */
  cpu: number;
  cpu_range: [number, number];
}

export interface HttpBenchmark {
  rows: HttpRow[];
  ratios: RatioRow[];
}

interface Target {
  name: string;
  server: string;
  env?: Record<string, string>;
}

interface Usage {
  user_us: number;
  system_us: number;
  requests: number;
}

interface Server {
  child: ChildProcess;
  port: number;
  /** The server's CPU time (µs) and request count so far. */
  usage(): Promise<Usage>;
}

async function start(server: string, env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []),
      "--import",
      "tsx",
      new URL(`./servers/${server}.ts`, import.meta.url).pathname,
    ],
    {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else lines.push(line);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`${server} exited with ${code}`))),
  );
  exited.catch(() => {});
  const nextLine = () =>
    Promise.race([
      lines.length ? Promise.resolve(lines.shift()!) : new Promise<string>((resolve) => waiting.push(resolve)),
      exited,
    ]);
  const { port } = JSON.parse(await nextLine()) as { port: number };
  return {
    child,
    port,
    async usage() {
      child.stdin!.write("\n");
      return JSON.parse(await nextLine()) as Usage;
    },
  };
}

const load = (port: number, connections: number, duration: number, overallRate?: number) =>
  autocannon({
    ...(overallRate ? { overallRate } : {}),
    url: `http://127.0.0.1:${port}/hook`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: autocannonTemplate,
    idReplacement: true,
    connections,
    duration,
  });

/** p99 latency with the load held at `rate` requests/s (autocannon's `overallRate`). */
async function p99At({ server, env }: Target, rate: number): Promise<number> {
  const running = await start(server, env);
  try {
    await load(running.port, 10, 2);
    return (await load(running.port, CONNECTIONS, DURATION, rate)).latency.p99;
  } finally {
    running.child.kill("SIGTERM");
  }
}

export async function measure({ server, env }: Target): Promise<Sample> {
  const running = await start(server, env);
  try {
    await load(running.port, 10, 2); // warm-up, not counted
    const before = await running.usage();
    const result = await load(running.port, CONNECTIONS, DURATION);
    const after = await running.usage();
    const requests = Math.max(1, after.requests - before.requests);
    const user = (after.user_us - before.user_us) / requests;
    const system = (after.system_us - before.system_us) / requests;
    return {
      requests_per_second: Math.round(result.requests.average),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      cpu_us_per_request: Math.round(user + system),
      cpu_user_us: Math.round(user),
      cpu_system_us: Math.round(system),
      non_2xx: result.non2xx,
      errors: result.errors,
    };
  } finally {
    running.child.kill("SIGTERM");
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const range = (values: number[]): [number, number] => [Math.min(...values), Math.max(...values)];
const round2 = (value: number) => Math.round(value * 100) / 100;

/** Each target measured ROUNDS times, the targets taking turns within each round. */
async function rounds(targets: Target[]): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(targets.map(({ name }) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      console.error(`  round ${round + 1}/${ROUNDS}: ${target.name}`);
      samples.get(target.name)!.push(await measure(target));
    }
  }
  return samples;
}

function row(name: string, samples: Sample[]): HttpRow {
  const rps = samples.map((sample) => sample.requests_per_second);
  const middle = samples.find((sample) => sample.requests_per_second === median(rps))!;
  return {
    name,
    ...middle,
    cpu_us_per_request: median(samples.map((sample) => sample.cpu_us_per_request)),
    cpu_user_us: median(samples.map((sample) => sample.cpu_user_us)),
    cpu_system_us: median(samples.map((sample) => sample.cpu_system_us)),
    rps_range: range(rps),
  };
}

function ratio(label: string, library: Sample[], reference: Sample[]): RatioRow {
  const throughput = library.map((sample, i) => sample.requests_per_second / reference[i]!.requests_per_second);
  const cpu = library.map((sample, i) => reference[i]!.cpu_us_per_request / sample.cpu_us_per_request);
  return {
    ratio: label,
    throughput: round2(median(throughput)),
    throughput_range: range(throughput).map(round2) as [number, number],
    cpu: round2(median(cpu)),
    cpu_range: range(cpu).map(round2) as [number, number],
  };
}

const REDIS = { BENCH_STORE: "redis" };

/** The targets of one framework, and which ratios the performance goals name. */
function framework(
  label: "fastify" | "express" | "node",
  server: string,
  adapter: string,
): { targets: Target[]; ratios: [string, string][] } {
  const bare = `${label} bare`;
  const targets: Target[] = [{ name: bare, server: `${label}-bare` }];
  const ratios: [string, string][] = [];
  for (const [store, env] of [
    ["memory", {}],
    ["redis", REDIS],
  ] as const) {
    const hand = `${label} hand-written (${store})`;
    const guarded = `${label} same guarantees (${store})`;
    const lib = `${label} ${adapter} (${store})`;
    targets.push(
      { name: hand, server: `${label}-hand-written`, env },
      { name: guarded, server: `${label}-guarded`, env },
      { name: lib, server: server, env },
    );
    ratios.push([lib, hand], [lib, guarded], [lib, bare]);
    const baseline = process.env.BENCH_BASELINE;
    if (baseline) {
      targets.push({ name: `${lib} baseline`, server, env: { ...env, BENCH_LIB: baseline } });
      ratios.push([lib, `${lib} baseline`]);
    }
  }
  return { targets, ratios };
}

export async function httpBenchmark(): Promise<HttpBenchmark> {
  const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
  const rows: HttpRow[] = [];
  const ratios: RatioRow[] = [];
  for (const { targets, ratios: pairs } of [
    framework("fastify", "fastify-adapter", "plugin"),
    framework("express", "express-adapter", "adapter"),
    framework("node", "node-adapter", "handler"),
  ]) {
    const chosen = targets.filter(({ name }) => !only || only.test(name));
    if (chosen.length === 0) continue;
    const samples = await rounds(chosen);
    for (const target of chosen) {
      const measured = row(target.name, samples.get(target.name)!);
      // Not for a baseline build: its p99 compares with nothing in the table.
      if (process.env.BENCH_P99 !== "0" && !target.name.endsWith(" baseline")) {
        measured.rate_at_80pct = Math.max(1, Math.round(measured.requests_per_second * 0.8));
        console.error(`  p99 at 80%: ${target.name}`);
        measured.p99_at_80pct_ms = await p99At(target, measured.rate_at_80pct);
      }
      rows.push(measured);
    }
    for (const [library, reference] of pairs) {
      if (samples.has(library) && samples.has(reference))
        ratios.push(ratio(`${library} ÷ ${reference}`, samples.get(library)!, samples.get(reference)!));
    }
  }
  return { rows, ratios };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await httpBenchmark();
  if (process.env.BENCH_JSON) console.log(JSON.stringify(result));
  else {
    console.table(result.rows);
    console.table(result.ratios);
  }
}
