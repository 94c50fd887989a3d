import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;

// The published package as a merchant installs it: the sources type-check under the strict settings,
// the tarball holds the license, and the declarations carry no deprecated name. publint and
// are-the-types-wrong run as their own CI step (.ci/run, `npm run check:package`).
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
});
