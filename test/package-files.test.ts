import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;
const read = (path: string) => readFileSync(join(root, path), "utf8");
const manifest = JSON.parse(read("package.json"));

describe("the files a registry page needs", () => {
  it("SECURITY.md says how to report privately, which versions are fixed and what counts", () => {
    const policy = read("SECURITY.md");
    expect(policy).toContain("## Reporting a vulnerability");
    expect(policy).toMatch(/privately, never in a public issue/);
    expect(policy).toContain("## Supported versions");
    expect(policy).toContain(`| ${manifest.version.replace(/\.\d+$/, ".x")} (latest on npm)`);
    for (const kind of ["Signature bypass", "Redaction misses", "Double processing"]) expect(policy).toContain(kind);
  });

  it("has keywords a search on the registry finds it by", () => {
    expect(manifest.keywords).toEqual(expect.arrayContaining(["webhook", "subscription", "idempotency"]));
  });

  it("asks for the pg-boss major its tests run on, and no later one", () => {
    const tested = JSON.parse(read("node_modules/pg-boss/package.json")).version as string;
    const major = tested.split(".")[0];
    expect(manifest.devDependencies["pg-boss"]).toMatch(new RegExp(`^\\^${major}\\.`));
    expect(manifest.peerDependencies["pg-boss"]).toBe(`^${major}.0.0`);
  });
});
