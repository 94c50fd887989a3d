import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const copy = mkdtempSync(join(tmpdir(), "mw-release-"));

afterAll(() => rmSync(copy, { recursive: true, force: true }));

// The release step of CONTRIBUTING.md, run on a copy of the manifest, the lockfile, the changelog and
// the changeset settings: what a maintainer's `npm run release:version` would leave behind.
describe("npm run release:version", () => {
  it("turns a waiting changeset into the next version: changelog entry first, manifest and lockfile bumped together", async () => {
    for (const name of ["package.json", "package-lock.json", "CHANGELOG.md", ".changeset"]) {
      cpSync(join(root, name), join(copy, name), { recursive: true });
    }
    symlinkSync(join(root, "node_modules"), join(copy, "node_modules"), "dir");
    const note = join(copy, ".changeset", "renewal-plan.md");
    writeFileSync(note, '---\n"merchant-webhooks": minor\n---\n\nA renewal names its plan in the log line.\n');

    await run("npm", ["run", "release:version", "--silent"], { cwd: copy });

    const manifest = JSON.parse(readFileSync(join(copy, "package.json"), "utf8"));
    const lock = JSON.parse(readFileSync(join(copy, "package-lock.json"), "utf8"));
    expect(manifest.version).toBe("0.2.0");
    expect([lock.version, lock.packages[""].version]).toEqual(["0.2.0", "0.2.0"]);
    const changelog = readFileSync(join(copy, "CHANGELOG.md"), "utf8");
    const headings = changelog.match(/^## .+$/gm) ?? [];
    expect(headings.slice(0, 2)).toEqual(["## 0.2.0", "## 0.1.0"]);
    expect(changelog.indexOf("A renewal names its plan in the log line.")).toBeLessThan(changelog.indexOf("## 0.1.0"));
    expect(changelog.startsWith("# Changelog\n")).toBe(true);
    expect(existsSync(note)).toBe(false);
  }, 120_000);
});
