// Checks ARCHITECTURE.md's layering on the import graph of src/ and adapters/: no import from a lower
// layer to a higher one, no file outside the layers, and no import cycle. Exits 1 on any finding.
import { readFileSync } from "node:fs";
import { execSync } from "node:child_process";
import path from "node:path";
process.chdir(new URL("..", import.meta.url).pathname);
let findings = 0;
const report = (line) => {
  findings++;
  console.log(line);
};
const files = execSync("git ls-files 'src/**.ts' 'adapters/**.ts'", { encoding: "utf8" }).trim().split("\n");
const LAYERS = [
  // ordering/position.ts is pure (no imports): the stores compare positions with it.
  ["src/schema", "src/verify", "src/logging", "src/answer", "src/lifecycle", "src/ordering/position.ts"],
  ["src/idempotency", "src/queue", "src/recording", "src/redis"],
  ["src/dispatch", "src/ordering", "src/telemetry"],
  ["src/receiver", "src/bullmq"],
  ["src/index.ts", "src/testing", "adapters", "src/client"],
  ["src/cli", "src/simulator"],
];
const layerOf = (f) => LAYERS.findIndex((l) => l.some((p) => f === p || f.startsWith(p + "/")));
const graph = new Map();
for (const f of files) {
  const src = readFileSync(f, "utf8");
  const deps = [...src.matchAll(/(?:from|import)\s*\(?\s*["'](\.[^"']+)["']/g)].map((m) =>
    path.normalize(path.join(path.dirname(f), m[1].replace(/\.js$/, ".ts"))),
  );
  graph.set(f, deps);
  for (const d of deps) {
    const a = layerOf(f),
      b = layerOf(d);
    if (a < 0 || b < 0) report(`outside the layers: ${f} -> ${d}`);
    else if (b > a) report(`up a layer: ${f} (layer ${a}) -> ${d} (layer ${b})`);
  }
}
// cycles (DFS)
const state = new Map();
const stack = [];
function dfs(n) {
  state.set(n, 1);
  stack.push(n);
  for (const d of graph.get(n) ?? []) {
    if (state.get(d) === 1) report("cycle: " + [...stack.slice(stack.indexOf(d)), d].join(" -> "));
    else if (!state.get(d)) dfs(d);
  }
  stack.pop();
  state.set(n, 2);
}
for (const f of graph.keys()) if (!state.get(f)) dfs(f);
console.log(`checked ${files.length} files: ${findings} findings`);
process.exit(findings ? 1 : 0);
