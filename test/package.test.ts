import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;

// The published package as a merchant installs it: types resolve for ESM and CJS on every subpath,
// and the sources type-check under the strict settings.
describe("package", () => {
  it("type-checks strictly", async () => {
    const { stdout } = await run("npx", ["tsc", "--noEmit", "-p", "."], { cwd: root }).catch((err) => err);
    expect(stdout).toBe("");
  }, 180_000);

  it("ships the MIT license text that package.json names", async () => {
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--silent", "--ignore-scripts"], { cwd: root });
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    expect(files).toContain("LICENSE");
    const manifest = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
    expect(manifest.license).toBe("MIT");
    expect(readFileSync(`${root}LICENSE`, "utf8")).toMatch(/^MIT License\n/);
  }, 60_000);

  it("carries no @deprecated name in the built declarations: 0.1.0 starts without them", () => {
    const declarations = readdirSync(`${root}dist`).filter((file) => /\.d\.c?ts$/.test(file));
    expect(declarations.length).toBeGreaterThan(10);
    const deprecated = declarations.filter((file) =>
      readFileSync(`${root}dist/${file}`, "utf8").includes("@deprecated"),
    );
    expect(deprecated).toEqual([]);
  });

  it("passes publint and are-the-types-wrong on every export", async () => {
    const result = await run("npm", ["run", "--silent", "check:package"], { cwd: root }).then(
      (ok) => ({ code: 0, out: ok.stdout + ok.stderr }),
      (err) => ({ code: err.code as number, out: String(err.stdout) + String(err.stderr) }),
    );
    expect(result.out).not.toMatch(/❌|error/i);
    expect(result.code).toBe(0);
  }, 180_000);
});
