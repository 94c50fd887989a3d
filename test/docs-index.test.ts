import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DOCS = join(ROOT, "docs");
const REPOSITORY = "https://github.com/merchant-webhooks/merchant-webhooks/blob/main/";
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Every Markdown page under docs/, as a path relative to docs/ (`internals/performance-notes.md`). */
function pages(dir = DOCS): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const at = join(dir, entry.name);
    if (entry.isDirectory()) return pages(at);
    return entry.name.endsWith(".md") ? [relative(DOCS, at)] : [];
  });
}

describe("the documentation's indexes", () => {
  const all = pages().filter((page) => page !== "README.md");

  it("docs/README.md lists every page under docs/", () => {
    const index = read("docs/README.md");
    expect(all.length).toBeGreaterThan(15);
    expect(all.filter((page) => !index.includes(`](${page})`))).toEqual([]);
  });

  it("the README's table lists every page a user reads (docs/ itself, not the engineering notes)", () => {
    const readme = read("README.md");
    const table = readme.slice(
      readme.indexOf("## Documentation"),
      readme.indexOf("\n## ", readme.indexOf("## Documentation") + 1),
    );
    const forUsers = all.filter((page) => !page.includes("/"));
    expect(forUsers.filter((page) => !table.includes(`](${REPOSITORY}docs/${page})`))).toEqual([]);
  });

  it("the README names the console and links its page", () => {
    const readme = read("README.md");
    expect(readme).toContain("## The console");
    expect(readme).toContain(`[docs/console.md](${REPOSITORY}docs/console.md)`);
  });

  it("docs/performance.md is a page to read, the engineering notes kept apart", () => {
    const lines = read("docs/performance.md").split("\n").length;
    expect(lines).toBeLessThan(150);
    expect(read("docs/performance.md")).toContain("## What to expect");
    expect(read("docs/performance.md")).toContain("## How to measure");
    expect(read("docs/performance.md")).toContain("](internals/performance-notes.md)");
  });
});
