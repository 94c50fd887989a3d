import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { HttpBenchmark, HttpRow, RatioRow } from "./http.js";

/** What `npm run bench` knows when it writes the table. */
export interface TableInput {
  machine: { cpu: string; cores: number; node: string; date: string; load_before: number[]; load_after: number[] };
  rounds: number;
  seconds: number;
  core: { us_per_notification: number; json_parse_us: number; core_to_json_parse: number };
  http: HttpBenchmark;
  heap?: { heap_kb_per_1000_in_flight: number; heap_kb_range: number[] };
  perKb?: {
    us_per_added_kb: { library: number; hand_written: number; same_guarantees: number; library_baseline?: number };
    /** Median of the per-round ratios of the slopes; their range beside it. */
    library_to_hand_written: number;
    library_to_hand_written_range?: number[];
    /** With `BENCH_BASELINE`: the baseline build's ratio, in the same rounds. */
    baseline_to_hand_written?: number;
  };
}

const START = "<!-- bench:start (written by npm run bench; do not edit) -->";
const END = "<!-- bench:end -->";

const number = (value: number | undefined) => (value === undefined ? "–" : value.toLocaleString("en-US"));

/** The performance table, in markdown. */
export function performanceTable({ machine, rounds, seconds, core, http, heap, perKb }: TableInput): string {
  const lines: string[] = [];
  const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(" / ");
  lines.push(
    `Measured ${machine.date.slice(0, 16).replace("T", " ")} UTC on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; ` +
      `load average (1/5/15 min) ${load(machine.load_before)} before, ${load(machine.load_after)} after. ` +
      `HTTP: ${rounds} interleaved round${rounds === 1 ? "" : "s"} of ${seconds} s per target, median round; ` +
      "server CPU is the server process's own `process.cpuUsage()` over the measured window, per request.",
    "",
    "| route | req/s (median, range) | server CPU per request: user + system | p99 at 80% of its saturating rate |",
    "| --- | --- | --- | --- |",
  );
  for (const row of http.rows as HttpRow[]) {
    lines.push(
      `| ${row.name} | ${number(row.requests_per_second)} (${row.rps_range.map(number).join("–")}) | ` +
        `${row.cpu_us_per_request} µs: ${row.cpu_user_us} + ${row.cpu_system_us} | ` +
        `${row.p99_at_80pct_ms === undefined ? "–" : `${row.p99_at_80pct_ms} ms at ${number(row.rate_at_80pct)}/s`} |`,
    );
  }
  lines.push("", "| goal | measured (median of per-round ratios, range) | met |", "| --- | --- | --- |");
  const find = (name: string) => http.ratios.find((ratio) => ratio.ratio === name);
  /** A row for library CPU ÷ the reference's, against `goal` (undefined: reported, no goal). */
  const cpuGoal = (label: string, library: string, reference: string, goal: number | undefined) => {
    const ratio = find(`${library} ÷ ${reference}`);
    if (!ratio) return;
    const over = cpuOver(ratio);
    const met = goal === undefined ? "(reported)" : over.value <= goal ? "yes" : "no";
    lines.push(
      `| ${label}${goal === undefined ? "" : ` ≤ ${goal}`} | ${over.value} (${over.range.join("–")}) | ${met} |`,
    );
  };
  const frameworks = [
    ["fastify", "plugin"],
    ["express", "adapter"],
    ["node", "handler"],
  ] as const;
  for (const [framework, adapter] of frameworks) {
    for (const store of ["memory", "redis"]) {
      const library = `${framework} ${adapter} (${store})`;
      cpuGoal(`${library}: server CPU ÷ same guarantees'`, library, `${framework} same guarantees (${store})`, 1.0);
    }
  }
  for (const [framework, adapter] of frameworks) {
    for (const store of ["memory", "redis"]) {
      const library = `${framework} ${adapter} (${store})`;
      // Express's own routing costs more than either route's work: its ratio is reported, with no goal.
      const goal = framework === "express" ? undefined : store === "memory" ? 1.4 : 1.15;
      cpuGoal(`${library}: server CPU ÷ plain hand-written's`, library, `${framework} hand-written (${store})`, goal);
    }
  }
  if (perKb) {
    const { library, hand_written, same_guarantees, library_baseline } = perKb.us_per_added_kb;
    const baseline =
      library_baseline === undefined
        ? ""
        : `; baseline build ${perKb.baseline_to_hand_written} (${library_baseline} µs)`;
    const range = perKb.library_to_hand_written_range ? `${perKb.library_to_hand_written_range.join("–")}; ` : "";
    lines.push(
      `| CPU per added KB of payload, library ÷ hand-written's ≤ 1.5 (in-process; same guarantees: ${same_guarantees} µs) | ${perKb.library_to_hand_written} (${range}${library} µs ÷ ${hand_written} µs${baseline}) | ${perKb.library_to_hand_written <= 1.5 ? "yes" : "no"} |`,
    );
  }
  const bare = find("fastify plugin (memory) ÷ fastify bare");
  if (bare)
    lines.push(
      `| Fastify plugin ÷ bare Fastify, requests/s ≥ 0.6 | ${bare.throughput} (${bare.throughput_range.join("–")}) | ${bare.throughput >= 0.6 ? "yes" : "no"} |`,
    );
  lines.push(
    `| core (\`receiver.handle\`, memory store) ÷ \`JSON.parse\` of the same body ≤ 3 | ${core.core_to_json_parse} (${core.us_per_notification} µs ÷ ${core.json_parse_us} µs) | ${core.core_to_json_parse <= 3 ? "yes" : "no"} |`,
  );
  if (heap)
    lines.push(
      `| heap per 1,000 notifications in flight (memory store, handlers waiting) | ${number(heap.heap_kb_per_1000_in_flight)} KB (${heap.heap_kb_range.map(number).join("–")}) | (reported) |`,
    );
  return lines.join("\n");
}

/** Library CPU ÷ reference CPU, from the row's reference ÷ library. */
function cpuOver(ratio: RatioRow): { value: number; range: number[] } {
  const invert = (value: number) => Math.round((1 / value) * 100) / 100;
  return { value: invert(ratio.cpu), range: [invert(ratio.cpu_range[1]), invert(ratio.cpu_range[0])] };
}

/** Replace the table between the markers in the first of `files` that has them. */
export function writeTable(table: string, files: string[]): string | undefined {
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, "utf8");
    const start = text.indexOf(START);
    const end = text.indexOf(END);
    if (start < 0 || end < start) continue;
    writeFileSync(file, `${text.slice(0, start + START.length)}\n\n${table}\n\n${text.slice(end)}`);
    return file;
  }
  return undefined;
}
