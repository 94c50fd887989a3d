import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runReplay } from "../../src/cli/commands/replay.js";
import { runSend } from "../../src/cli/commands/send.js";
import { runSimulate } from "../../src/cli/commands/simulate.js";
import { runValidate } from "../../src/cli/commands/validate.js";
import { captureIo } from "./capture-io.js";
import { type RunningWebhook, serveOnLoopback, startWebhook } from "./run-cli.js";

/** An endpoint that answers 200 and then streams its body forever. */
function endlessAnswer(): Promise<RunningWebhook> {
  const chunk = Buffer.alloc(64 * 1024, "x");
  return serveOnLoopback(
    createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      const more = () => {
        while (res.write(chunk)) if (res.destroyed) return;
      };
      res.on("drain", more);
      more();
    }),
  );
}

describe("the CLI with huge inputs", () => {
  let dir: string;
  let hugeLine: string;
  const good = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "huge-1" });
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "mw-cli-huge-"));
    hugeLine = join(dir, "huge-line.jsonl");
    // One line of 17 MB (a corrupt recording), then a notification.
    writeFileSync(hugeLine, `{"id":"${"x".repeat(17 * 1024 * 1024)}"}\n${JSON.stringify(good)}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("validate reports a line past 16 MB with file and line, without reading it, and checks the rest", async () => {
    const io = captureIo();
    expect(await runValidate([hugeLine], io)).toBe(1);
    expect(io.stdout).toBe(
      `${hugeLine}:1 not read: the line is 17.0 MB, more than 16.0 MB\n2 notifications checked, 1 invalid\n`,
    );
  });

  it("validate and replay refuse a .json file past 64 MB with the fix in the message, without reading it", async () => {
    const big = join(dir, "big.json");
    writeFileSync(big, "");
    truncateSync(big, 100 * 1024 * 1024); // sparse: nothing to read, and never read
    const io = captureIo();
    expect(await runValidate([big], io)).toBe(1);
    expect(io.stdout).toContain(
      `${big}:1 not read: 100.0 MB, more than the 64.0 MB a .json file may have; split it, or write it as .jsonl (one notification per line)\n`,
    );
    const replayed = captureIo();
    expect(await runReplay([big, "--url", "http://127.0.0.1:1/hook"], replayed)).toBe(1);
    expect(replayed.stderr).toContain(`${big}:1: not sent: not read: 100.0 MB`);
  });

  describe("against a receiver", () => {
    let webhook: RunningWebhook;
    const onRenew = vi.fn();
    beforeAll(async () => {
      webhook = await startWebhook({ onRenew });
    });
    afterAll(() => webhook.close());

    it("replay sends the rest of a file with a huge line and reports the line", async () => {
      const io = captureIo();
      expect(await runReplay([hugeLine, "--url", webhook.url], io)).toBe(1);
      expect(io.stdout).toMatch(/^processed\s+1$/m);
      expect(io.stderr).toContain(`${hugeLine}:1: not sent: not read: the line is 17.0 MB, more than 16.0 MB\n`);
      expect(onRenew.mock.calls.map(([n]) => n.id)).toEqual([good.id]);
    });

    it("replay sends the rest of a file with a line nested 200,000 deep and reports the line", async () => {
      const file = join(dir, "deep.jsonl");
      const after = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "deep-after" });
      writeFileSync(file, `${"[".repeat(200_000)}${"]".repeat(200_000)}\n${JSON.stringify(after)}\n`);
      onRenew.mockClear();
      const io = captureIo();
      expect(await runReplay([file, "--url", webhook.url], io)).toBe(1);
      expect(io.stdout).toMatch(/^processed\s+1$/m);
      expect(io.stderr).toContain(`${file}:1 (no id): no answer: not sent: nested deeper than 1000 levels`);
      expect(onRenew.mock.calls.map(([n]) => n.id)).toEqual([after.id]);
    });

    it("replay sends a long recording a batch at a time and counts every answer across batches", async () => {
      const file = join(dir, "long.jsonl");
      const lines = Array.from({ length: 1_050 }, (_, i) =>
        JSON.stringify(
          i === 0 || i === 1_020
            ? buildNotification("SUBSCRIPTION_RENEW", { id: `WH-bad-${i}`, resource: { execution_phase: undefined } })
            : buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: `long-${i}` }),
        ),
      );
      writeFileSync(file, `${lines.join("\n")}\n`);
      const io = captureIo();
      expect(await runReplay([file, "--url", webhook.url, "--concurrency", "8"], io)).toBe(1);
      expect(io.stdout).toMatch(/^sent\s+1050$/m);
      expect(io.stdout).toMatch(/^processed\s+1048$/m);
      expect(io.stdout).toMatch(/^ {2}status 400\s+2$/m);
      expect(io.stderr).toContain(`${file}:1 WH-bad-0: 400 invalid notification`);
      expect(io.stderr).toContain(`${file}:1021 WH-bad-1020: 400 invalid notification`);
    }, 120_000);
  });

  it("send and simulate read only the start of an answer that never ends", async () => {
    const endless = await endlessAnswer();
    try {
      const sent = captureIo();
      expect(await runSend(["renew", "--url", endless.url, "--timeout", "60000"], sent)).toBe(1);
      expect(sent.stderr).toMatch(/^WH-\w+ SUBSCRIPTION_RENEW: 200 \(not a webhook answer\)\n$/);

      const file = join(dir, "scenario.txt");
      writeFileSync(file, "create e\n");
      const simulated = captureIo();
      const args = ["--webhook-url", endless.url, "--retry-schedule", "0", "--attempt-timeout", "60000"];
      expect(await runSimulate([...args, "--scenario", file, "--exit"], simulated)).toBe(1);
      expect(simulated.stdout).toMatch(/SUBSCRIPTION_CREATED attempt 1: 200 x{20}/);
      expect(simulated.stdout).toContain("undelivered: 1 exhausted, 0 pending\n");
    } finally {
      await endless.close();
    }
  });
});
