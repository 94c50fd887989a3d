import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (name: string) => JSON.parse(readFileSync(new URL(`../${name}`, import.meta.url), "utf8"));

// `npm install` on a fresh clone rewrites the lockfile's root entry whenever it disagrees with
// package.json, leaving a clone dirty before anyone changed anything. These are the fields it copies.
describe("package-lock.json", () => {
  it("has a root entry that agrees with package.json, so a clean install leaves it unchanged", () => {
    const manifest = read("package.json");
    const root = read("package-lock.json").packages[""];
    const withoutDotSlash = (bin: Record<string, string>) =>
      Object.fromEntries(Object.entries(bin).map(([name, path]) => [name, path.replace(/^\.\//, "")]));
    expect(root).toEqual({
      name: manifest.name,
      version: manifest.version,
      license: manifest.license,
      bin: withoutDotSlash(manifest.bin),
      dependencies: manifest.dependencies,
      devDependencies: manifest.devDependencies,
      peerDependencies: manifest.peerDependencies,
      peerDependenciesMeta: manifest.peerDependenciesMeta,
      engines: manifest.engines,
    });
  });
});
