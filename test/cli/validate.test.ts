import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.js";

describe("merchant-webhooks validate", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "mw-validate-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("exits 0 for valid notifications in a .json array and a recording's .jsonl", async () => {
    const json = join(dir, "good.json");
    writeFileSync(
      json,
      JSON.stringify([buildNotification("SUBSCRIPTION_CREATED"), buildNotification("UNKNOWN")], null, 2),
    );
    const jsonl = join(dir, "good.jsonl");
    const entry = {
      received_at: "2026-11-23T08:15:31.000Z",
      headers: {},
      notification: buildNotification("SUBSCRIPTION_RENEW"),
      answer: { status: 200, processed: true, message: "processed" },
    };
    writeFileSync(jsonl, `${JSON.stringify(entry)}\n`);
    const run = await runCli(["validate", json, jsonl]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("3 notifications checked, 0 invalid\n");
  });

  it("prints each schema error as file:line path: message and exits 1", async () => {
    const file = join(dir, "bad.jsonl");
    const lines = [
      JSON.stringify(buildNotification("SUBSCRIPTION_RENEW")),
      JSON.stringify(
        buildNotification("SUBSCRIPTION_RENEW", {
          resource: { execution_phase: undefined, subscriber: { email: "not-an-email" } },
        }),
      ),
      JSON.stringify(
        buildNotification("SUBSCRIPTION_RENEW", {
          resource: { renewal_event: { payment_detail: { amount: { value: "12,50" } } } },
        }),
      ),
      '{"id": "WH-cut-off"',
    ];
    writeFileSync(file, `${lines.join("\n")}\n`);
    const run = await runCli(["validate", file]);
    expect(run.code).toBe(1);
    const out = run.stdout.split("\n");
    // The receiver's wording, as in its 400 answer.
    expect(out).toContain(`${file}:2 resource.execution_phase: required`);
    expect(out).toContain(`${file}:2 resource.subscriber.email: invalid email`);
    expect(out).toContain(`${file}:3 resource.renewal_event.payment_detail.amount.value: must be a decimal amount`);
    expect(out).toContain(`${file}:4 invalid JSON: unexpected end of input, expected ',' or '}' (column 20)`);
    expect(out.some((line) => line.startsWith(`${file}:1 `))).toBe(false);
    expect(run.stdout).toContain("4 notifications checked, 3 invalid\n");
  });

  it("points into a pretty-printed array at the line where the invalid element starts", async () => {
    const file = join(dir, "array.json");
    const first = buildNotification("SUBSCRIPTION_CANCELLED");
    const second = buildNotification("SUBSCRIPTION_CANCELLED", { id: "" });
    writeFileSync(file, JSON.stringify([first, second], null, 2));
    const run = await runCli(["validate", file]);
    expect(run.code).toBe(1);
    const line = 2 + JSON.stringify(first, null, 2).split("\n").length;
    expect(run.stdout).toContain(`${file}:${line} id: `);
  });

  it("reports a syntax error in a .json file at its line, in one line of output", async () => {
    const file = join(dir, "broken.json");
    // No comma after the id: the error is on line 3, where "resource" starts.
    writeFileSync(file, '{\n  "id": "WH-1"\n  "resource": {}\n}\n');
    const run = await runCli(["validate", file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(
      `${file}:3 invalid JSON: unexpected '"', expected ',' or '}' (column 3)\n1 notification checked, 1 invalid\n`,
    );

    // An error V8 reports without a position (and with an excerpt spanning lines): still its own line.
    writeFileSync(file, '{\n  "id": "WH-1",\n  "resource": }\n');
    const second = await runCli(["validate", file]);
    expect(second.stdout).toBe(
      `${file}:3 invalid JSON: unexpected '}', expected a value (column 15)\n1 notification checked, 1 invalid\n`,
    );
  });

  it("exits 2 for a path that does not exist", async () => {
    const run = await runCli(["validate", join(dir, "missing.json")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no such file or directory");
  });
});
