import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/args.js";
import { progressBar } from "../../src/cli/progress.js";
import { formatSummaryTable, summarize } from "../../src/cli/summary-table.js";

function capture(tty: boolean): CliIo & { text: () => string } {
  let text = "";
  return { out: (t) => void (text += t), err: (t) => void (text += t), tty, columns: 80, text: () => text };
}

describe("replay summary table", () => {
  it("counts processed, rejected by status, and failed", () => {
    const ok = { id: "a", origin: "[0]", status: 200, answer: { processed: true, message: "processed" } };
    const table = formatSummaryTable(
      summarize([
        ok,
        { ...ok, id: "b" },
        { id: "c", origin: "[2]", status: 401, answer: { processed: false, message: "signature verification failed" } },
        { id: "d", origin: "[3]", status: 500, answer: { processed: false, message: "handler failed" } },
        { id: "e", origin: "[4]", status: 401, answer: { processed: false, message: "signature verification failed" } },
        { id: "f", origin: "[5]", status: 200, answer: { processed: false, message: "handler failed" } }, // failureStatus: 200
        { id: "g", origin: "[6]", status: 0, error: "ECONNREFUSED" },
        {
          id: "h",
          origin: "[7]",
          status: 200,
          answer: {
            processed: true,
            message: "stale: older than the newest completed notification of its subscription",
          },
        },
      ]),
    );
    expect(table).toBe(
      [
        "result        count",
        "sent              8",
        "processed         2",
        "stale             1",
        "rejected          4",
        "  status 200      1",
        "  status 401      2",
        "  status 500      1",
        "failed            1",
        "",
      ].join("\n"),
    );
  });
});

describe("progress bar", () => {
  it("draws in place on a terminal and clears itself when done", () => {
    const io = capture(true);
    const bar = progressBar(io, 4);
    for (let done = 1; done <= 4; done++) bar.update(done);
    bar.finish();
    expect(io.text()).toContain("\rsending [");
    expect(io.text()).toContain("] 4/4 100%");
    expect(io.text().endsWith("\r\x1b[2K")).toBe(true);
  });

  it("writes nothing when stdout is not a terminal", () => {
    const io = capture(false);
    const bar = progressBar(io, 4);
    bar.update(4);
    bar.finish();
    expect(io.text()).toBe("");
  });
});
