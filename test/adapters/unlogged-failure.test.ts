import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("./fixtures/unlogged-failure.ts", import.meta.url));

describe("an adapter's internal error with no logger passed", () => {
  it("is answered 500 and logged by the default logger on the Node and Pages Router adapters", async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], {
      timeout: 60_000,
    });
    expect(stderr.trim().split("\n")).toEqual(["answered 500", "answered 500"]);
    const lines = stdout
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({ level: 50, name: "merchant-webhooks", outcome: "internal_error", status: 500 }),
      expect.objectContaining({ level: 50, name: "merchant-webhooks", outcome: "internal_error", status: 500 }),
    ]);
    expect(lines[0].err).toMatchObject({ message: "request object broken" });
  });
});
