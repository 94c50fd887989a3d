import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROOT = new URL("..", import.meta.url);
const REPOSITORY = "https://github.com/merchant-webhooks/merchant-webhooks";
const read = (path: string) => readFileSync(new URL(path, ROOT), "utf8");

// The README is also the package's page on the registry, where a relative link leads nowhere and docs/
// is not shipped: every link is absolute, and each into this repository names a file that exists.
describe("README links", () => {
  const targets = [...read("README.md").matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);

  it("are absolute or anchors on the page", () => {
    expect(targets.length).toBeGreaterThan(20);
    expect(targets.filter((target) => !/^(https?:\/\/|#)/.test(target))).toEqual([]);
  });

  it("into the repository name files that exist on its main branch", () => {
    const prefix = `${REPOSITORY}/blob/main/`;
    const missing = targets
      .filter((target) => target.startsWith(prefix))
      .map((target) => target.slice(prefix.length).replace(/#.*$/, ""))
      .filter((path) => !existsSync(new URL(path, ROOT)));
    expect(missing).toEqual([]);
  });

  it("agree with package.json's repository, homepage and bugs", () => {
    const manifest = JSON.parse(read("package.json"));
    expect(manifest.repository).toEqual({ type: "git", url: `git+${REPOSITORY}.git` });
    expect(manifest.homepage).toBe(`${REPOSITORY}#readme`);
    expect(manifest.bugs).toEqual({ url: `${REPOSITORY}/issues` });
  });
});
