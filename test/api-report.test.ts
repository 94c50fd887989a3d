import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain script of .ci/, without types
import { apiSurface } from "../.ci/api-report.mjs";

const REPORT = new URL("../.ci/merchant-webhooks.api.md", import.meta.url);

describe("the API report", () => {
  it("is the public surface the sources give: a surface change updates .ci/merchant-webhooks.api.md in the same review", () => {
    const { report, collisions } = apiSurface() as { report: string; collisions: string[] };
    // A name exported by two subpaths is the same thing re-exported, never two things with one name; but
    // each adapter's entry points, one per framework by design (DESIGN.md): same role, the framework's types.
    const PER_ADAPTER = ["serveConsole", "subscriptionWebhook"];
    expect(collisions.filter((line) => !PER_ADAPTER.includes(line.split(":")[0]!))).toEqual([]);
    // Every subpath with a code entry point has its section.
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    const subpaths = Object.keys(manifest.exports).filter((key) => typeof manifest.exports[key] === "object");
    for (const subpath of subpaths)
      expect(report).toContain(`\n## merchant-webhooks${subpath === "." ? "" : subpath.slice(1)}\n`);
    expect(report, "run `npm run api:report` and review the change").toBe(readFileSync(REPORT, "utf8"));
  }, 180_000);
});
