// Checks ARCHITECTURE.md's layering on the import graph of src/ and adapters/: every folder has a place
// in one explicit order, and a file may import from its own folder or from a folder placed before its
// own, never after (so no two folders import each other, whichever way). Also: no file outside the
// order, no import between the folders APART names, and no import cycle. Exits 1 on any finding.
//
// `node .ci/check-layers.mjs [root]` checks the tree at `root` (default: this repository).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const root = process.argv[2] ?? new URL("..", import.meta.url).pathname;
process.chdir(root);

// Lowest first. A folder may use the folders before it.
const ORDER = [
  "src/shared", // helpers with no idea of the domain: canonical JSON, time limits, reading a Node body, option keys and close time-outs; the errors' base
  "src/logging", // what is written about a notification: loggers, recordings, and the redaction both use
  "src/schema", // the notification's zod schemas, inferred types, and how a failed validation is told
  "src/verify", // signature checks
  "src/idempotency", // the store interface, the memory store, positions the stores compare
  "src/queue", // the queue interface and the in-process queue
  "src/redis", // the Redis store and stream recorder, and every Redis connection
  "src/postgres", // the PostgreSQL store: the inbox tables, claims in the handler's transaction
  "src/dispatch", // running a claimed notification's handler; the table of every way a notification ends
  "src/telemetry", // OpenTelemetry spans and metrics around dispatch and the receiver
  "src/receiver", // the core: intake, claim, dispatch, answer, the receiver's options, closeOnSignals
  "src/worker", // the queue-neutral worker: job data, its seal, the run of one job over a transport
  "src/bullmq", // the durable queue on BullMQ, a transport of the worker
  "src/pg-boss", // the durable queue on pg-boss, a transport of the worker running each job in the claim's transaction
  "src/testing", // builders, signers, replay
  "src/client", // the payment API client
  "src/reconcile", // the reconciler: what the platform never delivered, found and repaired once
  "src/console", // the admin API and the notification console (adapters mount it)
  "adapters", // framework shims over the receiver
  "src/index.ts", // the root entry
  "src/simulator", // the platform simulator (a sender and an API server)
  "src/cli", // the command line
];

// Folders placed after another that still must not use it: each queue is a transport of src/worker, and
// the console knows queues only through src/queue's interface.
const APART = [
  ["src/pg-boss", "src/bullmq"],
  ["src/console", "src/bullmq"],
  ["src/console", "src/pg-boss"],
];

let findings = 0;
const report = (line) => {
  findings++;
  console.log(line);
};

/** Every .ts file under `dir`, as a path relative to the root with `/` separators. */
function tsFiles(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const at = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return tsFiles(at);
    return entry.name.endsWith(".ts") ? [at] : [];
  });
}

const rankOf = (file) => ORDER.findIndex((place) => file === place || file.startsWith(`${place}/`));
const files = [...tsFiles("src"), ...tsFiles("adapters")];
const graph = new Map();
for (const file of files) {
  const source = readFileSync(file, "utf8");
  const deps = [...source.matchAll(/(?:from|import)\s*\(?\s*["'](\.[^"']+)["']/g)].map((m) =>
    path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1].replace(/\.js$/, ".ts"))),
  );
  graph.set(file, deps);
  const from = rankOf(file);
  if (from < 0) report(`outside the order: ${file} (add its folder to ORDER in .ci/check-layers.mjs)`);
  for (const dep of deps) {
    const to = rankOf(dep);
    if (to < 0) report(`outside the order: ${file} -> ${dep}`);
    else if (from >= 0 && to > from) report(`backward: ${file} (${ORDER[from]}) -> ${dep} (${ORDER[to]})`);
    else if (APART.some(([a, b]) => ORDER[from] === a && ORDER[to] === b))
      report(`apart: ${file} (${ORDER[from]}) -> ${dep} (${ORDER[to]}): ${ORDER[from]} must not use ${ORDER[to]}`);
  }
}

// Cycles, within a folder as much as across folders (DFS).
const state = new Map();
const stack = [];
function visit(node) {
  state.set(node, 1);
  stack.push(node);
  for (const dep of graph.get(node) ?? []) {
    if (state.get(dep) === 1) report(`cycle: ${[...stack.slice(stack.indexOf(dep)), dep].join(" -> ")}`);
    else if (!state.get(dep)) visit(dep);
  }
  stack.pop();
  state.set(node, 2);
}
for (const node of graph.keys()) if (!state.get(node)) visit(node);
console.log(`checked ${files.length} files: ${findings} findings`);
process.exit(findings ? 1 : 0);
