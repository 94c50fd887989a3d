import { execFileSync, execSync } from "node:child_process";
import { mkdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Build another commit of the library to measure a change against it in the same run:
 *
 *   npx tsx bench/build-baseline.ts [ref]     (default HEAD) prints the build's dist directory, then
 *   BENCH_BASELINE=<that directory> npx tsx bench/http.ts
 *
 * The commit's files are exported to a temporary directory (no checkout, the work tree is not touched)
 * and built there (JavaScript only) with this repository's node_modules.
 */
const ref = process.argv[2] ?? "HEAD";
const repo = new URL("..", import.meta.url).pathname;
const commit = execFileSync("git", ["rev-parse", "--short", ref], { cwd: repo, encoding: "utf8" }).trim();
const dir = join(tmpdir(), `merchant-webhooks-${commit}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
execSync(`git archive ${commit} | tar -x -C ${JSON.stringify(dir)}`, { cwd: repo });
symlinkSync(realpathSync(join(repo, "node_modules")), join(dir, "node_modules"));
execFileSync(process.execPath, [join(repo, "node_modules/tsup/dist/cli-default.js"), "--no-dts"], {
  cwd: dir,
  stdio: ["ignore", "ignore", "inherit"],
});
console.log(join(dir, "dist"));
