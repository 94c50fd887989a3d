import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> };
const api = readFileSync(join(ROOT, "docs", "api.md"), "utf8");

/** The package's module specifiers, from package.json `exports` (`.` → `merchant-webhooks`); data files have no exports. */
const specifiers = Object.keys(manifest.exports)
  .filter((subpath) => subpath !== "./package.json" && !subpath.endsWith(".sql"))
  .map((subpath) => (subpath === "." ? "merchant-webhooks" : `merchant-webhooks/${subpath.slice(2)}`));

/** A table row naming one export; the columns may be padded to line up. */
const ROW = /^\| `([^`]+)` +\|/gm;

/** The text of docs/api.md's section for one specifier, from its heading to the next one. */
function sectionOf(specifier: string): string | undefined {
  const heading = `## \`${specifier}\`\n`;
  const start = api.indexOf(heading);
  if (start === -1) return undefined;
  const next = api.indexOf("\n## ", start + heading.length);
  return api.slice(start, next === -1 ? undefined : next);
}

describe("docs/api.md", () => {
  it.each(specifiers)("lists every value export of %s in its section", async (specifier) => {
    const section = sectionOf(specifier);
    expect(section, `docs/api.md has no "## \`${specifier}\`" section`).toBeDefined();
    const names = Object.keys((await import(/* @vite-ignore */ specifier)) as object);
    expect(names.length).toBeGreaterThan(0);
    const listed = new Set(Array.from(section!.matchAll(ROW), (match) => match[1]));
    const missing = names.filter((name) => !listed.has(name));
    expect(missing, `value exports of ${specifier} missing from docs/api.md`).toEqual([]);
  });

  it("lists no value export a subpath does not have", async () => {
    const stale: string[] = [];
    for (const specifier of specifiers) {
      const names = new Set(Object.keys((await import(/* @vite-ignore */ specifier)) as object));
      for (const [, name] of sectionOf(specifier)?.matchAll(ROW) ?? [])
        if (!names.has(name!)) stale.push(`${specifier}: ${name}`);
    }
    expect(stale).toEqual([]);
  });
});
