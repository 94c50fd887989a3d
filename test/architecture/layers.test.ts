import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("../../.ci/check-layers.mjs", import.meta.url));

/** ARCHITECTURE.md's layers, held: no import runs up a layer or outside them, and there is no cycle. */
describe("the layers", () => {
  it("has no import from a lower layer to a higher one, and no import cycle", () => {
    const output = execFileSync(process.execPath, [script], { encoding: "utf8" });
    expect(output).toMatch(/checked \d+ files: 0 findings/);
  });
});
