import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const script = join(root, ".ci/check-layers.mjs");

/** The check's output and exit code on the tree at `dir`. */
function check(dir: string) {
  const run = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
  return { code: run.status, output: run.stdout + run.stderr };
}

/** A copy of src/ and adapters/ to plant imports in. */
function copyOfTree(): string {
  const dir = mkdtempSync(join(tmpdir(), "mw-layers-"));
  copies.push(dir);
  cpSync(join(root, "src"), join(dir, "src"), { recursive: true });
  cpSync(join(root, "adapters"), join(dir, "adapters"), { recursive: true });
  return dir;
}
const copies: string[] = [];
afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** ARCHITECTURE.md's layers, held: every import runs to an earlier folder, none outside, and no cycle. */
describe("the layers", () => {
  it("has no backward import between folders, nothing outside the order, and no import cycle", () => {
    const { code, output } = check(root);
    expect(output).toMatch(/checked \d+ files: 0 findings/);
    expect(code).toBe(0);
  });

  it.each([
    // The four pairs that ran both ways before each folder had its own place, planted again (the
    // `ordering` option they imported is in src/receiver/options.ts now).
    ["backward", "src/dispatch/run-claimed.ts", "../telemetry/observe-handler.js", "src/telemetry/observe-handler.ts"],
    ["backward", "src/dispatch/run-claimed.ts", "../receiver/options.js", "src/receiver/options.ts"],
    ["backward", "src/idempotency/memory-store.ts", "../receiver/options.js", "src/receiver/options.ts"],
    ["backward", "src/logging/recorder.ts", "../redis/connect.js", "src/redis/connect.ts"],
    // The worker core knows no transport: each queue implements what it asks for.
    ["backward", "src/worker/take-next.ts", "../bullmq/job-id.js", "src/bullmq/job-id.ts"],
    ["backward", "src/worker/claim-job.ts", "../pg-boss/job-table.js", "src/pg-boss/job-table.ts"],
    // Queues kept apart: each is a transport of src/worker, and the console knows neither.
    ["apart", "src/pg-boss/run-job.ts", "../bullmq/job-id.js", "src/bullmq/job-id.ts"],
    ["apart", "src/console/admin.ts", "../bullmq/job-id.js", "src/bullmq/job-id.ts"],
    ["apart", "src/console/admin.ts", "../pg-boss/job-table.js", "src/pg-boss/job-table.ts"],
  ])("fails on a planted %s import: %s -> %s", (kind, file, specifier, resolved) => {
    const dir = copyOfTree();
    appendFileSync(join(dir, file), `\nexport type * from "${specifier}";\n`);
    const { code, output } = check(dir);
    expect(code).toBe(1);
    expect(output).toContain(`${kind}: ${file} (${file.split("/").slice(0, 2).join("/")}) -> ${resolved}`);
  });

  it("fails on a file in a folder the order does not place", () => {
    const dir = copyOfTree();
    cpSync(join(dir, "src/verify"), join(dir, "src/extras"), { recursive: true });
    const { code, output } = check(dir);
    expect(code).toBe(1);
    expect(output).toContain("outside the order: src/extras/");
  });
});
