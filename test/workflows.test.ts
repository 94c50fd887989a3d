import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const check = (dir?: string) =>
  run("npx", ["tsx", ".ci/check-workflows.mjs", ...(dir ? [dir] : [])], { cwd: root }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
const workflow = (name: string) => readFileSync(join(root, ".github", "workflows", name), "utf8");

describe("the hosted workflows", () => {
  const scratch = mkdtempSync(join(tmpdir(), "mw-workflows-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("pass GitHub's workflow schema, as .ci/run checks them", async () => {
    expect(await check()).toEqual({ code: 0, stdout: "2 workflows checked: 0 errors\n" });
  }, 60_000);

  it("the checker refuses a misspelt key and a misspelt expression, naming the line", async () => {
    // A workflow expression, not a template placeholder: `githb` for `github`.
    const expression = ["$", "{{ githb.sha }}"].join("");
    writeFileSync(
      join(scratch, "broken.yml"),
      `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${expression}\n        timeout-minuts: 5\n`,
    );
    const result = await check(scratch);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("(Line: 6, Col: 14): Unrecognized named-value: 'githb'");
    expect(result.stdout).toContain("(Line: 7, Col: 9): Unexpected value 'timeout-minuts'");
  }, 60_000);

  it("CI runs .ci/run with Redis and PostgreSQL; a release publishes with provenance through OIDC", () => {
    const ci = workflow("ci.yml");
    expect(ci).toContain("run: bash .ci/run");
    expect(ci).toMatch(/services:\n\s+redis:\n\s+image: redis:7/);
    expect(ci).toMatch(/postgres:\n\s+image: postgres:15/);
    const release = workflow("release.yml");
    expect(release).toContain("id-token: write");
    expect(release).toContain('NPM_CONFIG_PROVENANCE: "true"');
    expect(release).toContain("uses: changesets/action@v1");
    expect(release).not.toMatch(/NPM_TOKEN|NODE_AUTH_TOKEN/);
  });
});
