import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { createPaymentClient } from "merchant-webhooks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSimulate } from "../../src/cli/commands/simulate.js";
import { recordingWebhook } from "../simulator/recording-webhook.js";
import { scriptedEndpoint } from "../simulator/scripted-endpoint.js";
import { freePort } from "../support/redis.js";
import { captureIo } from "./capture-io.js";
import { type RunningWebhook, runCli } from "./run-cli.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** Wait until `pattern` appears in what a session wrote to stdout. */
function waiter(output: () => { stdout: string; stderr: string }) {
  return async (pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { stdout, stderr } = output();
      const match = pattern.exec(stdout);
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`no ${pattern} in stdout: ${stdout}\nstderr: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
}

/** A session in this process: lines written to its standard input, its output read as it comes. */
function simulateInProcess(args: readonly string[]) {
  const io = captureIo();
  const input = new PassThrough();
  const output = () => ({ stdout: io.stdout, stderr: io.stderr });
  return {
    send: (line: string) => void input.write(`${line}\n`),
    waitFor: waiter(output),
    exited: runSimulate(args, io, input),
    output,
    end: () => void input.end(),
  };
}

/** The CLI as a separate process, for what only a process gets: Ctrl-C. */
function startSimulate(args: readonly string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "simulate", ...args],
    { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? -1)));
  const output = () => ({ stdout, stderr });
  return {
    send: (line: string) => void child.stdin.write(`${line}\n`),
    waitFor: waiter(output),
    exited,
    output,
    kill: () => child.kill("SIGKILL"),
    interrupt: () => child.kill("SIGINT"),
  };
}

describe("merchant-webhooks simulate", () => {
  let webhook: RunningWebhook;
  let calls: string[];
  beforeAll(async () => {
    ({ webhook, calls } = await recordingWebhook(SECRET));
  });
  afterAll(() => webhook.close());

  it("serves the API on --port and sends signed notifications for scenario commands typed on stdin", async () => {
    const port = await freePort();
    const sim = simulateInProcess([
      "--port",
      String(port),
      "--webhook-url",
      webhook.url,
      "--secret",
      SECRET,
      "--time-scale",
      "0.001",
    ]);
    try {
      const [, baseUrl] = await sim.waitFor(/listening (\S+)\n/);
      expect(baseUrl).toBe(`http://127.0.0.1:${port}`);

      const client = createPaymentClient({ baseUrl: baseUrl! });
      const order = await client.createOrder({
        reference_id: "cli-order",
        purchase_units: [{ amount: { currency_code: "EUR", value: "9.99" } }],
      });
      expect((await client.queryOrder({ id: order.id })).status).toBe("PAYER_ACTION_REQUIRED");

      for (const line of [
        "create alice merchant=M-CLI",
        "renew alice",
        "suspend alice card expired",
        "resume alice",
        "cancel alice",
        "bogus",
        "settle",
        "log",
      ])
        sim.send(line);
      const [, subscription] = await sim.waitFor(/created alice (SUB-\d+)\n/);
      await sim.waitFor(/settled: 5 delivered, 0 undelivered\n/);
      await sim.waitFor(/SUBSCRIPTION_CANCELLED +1 +200 +yes/);
      expect(sim.output().stderr).toContain('unknown command "bogus"');
      // Each arrived once, signed; deliveries run concurrently, as a platform's do, so not necessarily in order.
      expect(calls.map((call) => call.split(" ").slice(0, 2).join(" ")).sort()).toEqual(
        ["created", "renew", "suspend", "resume", "cancel"].map((name) => `${name} ${subscription}`).sort(),
      );

      sim.send("quit");
      expect(await sim.exited).toBe(0);
      expect(sim.output().stdout).toContain("undelivered: 0 exhausted, 0 pending");
    } finally {
      sim.end();
    }
  });

  it("runs a scenario file with --exit and exits 1 when a notification could not be delivered", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mw-scenario-"));
    const file = join(dir, "scenario.txt");
    await writeFile(file, "# a renewal nobody receives\ncreate bob\nrenew bob\n");
    const port = await freePort();
    const run = await runCli([
      "simulate",
      "--webhook-url",
      `http://127.0.0.1:${port}/nowhere`,
      "--retry-schedule",
      "0,10,10",
      "--scenario",
      file,
      "--exit",
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/created bob SUB-\d+/);
    expect(run.stdout).toContain("undelivered: 2 exhausted, 0 pending");
    expect(run.stdout).toContain("SUBSCRIPTION_RENEW");
  });

  it("the first Ctrl-C stops and prints the latest attempts and the summary", async () => {
    const endpoint = await scriptedEndpoint([{ status: 503, body: { processed: false, message: "busy" } }]);
    const sim = startSimulate(["--webhook-url", endpoint.url]);
    try {
      await sim.waitFor(/listening /);
      sim.send("create c");
      await sim.waitFor(/SUBSCRIPTION_CREATED attempt 1: 503 busy: will retry\n/);
      sim.interrupt();
      expect(await sim.exited).toBe(1);
      const { stdout } = sim.output();
      expect(stdout).toContain("stopping (Ctrl-C again to exit at once)\n");
      // The attempt table as `log` prints it, then the counts: every attempt so far was answered 503.
      const table = /\n(id +event_type +attempt +status +processed +ms +message\n(?:WH-.*\n)+)sent (\d+) /.exec(stdout);
      expect(table, stdout).not.toBeNull();
      const rows = table![1]!.split("\n").slice(1, -1);
      expect(rows.length).toBe(Number(table![2]));
      for (const row of rows) expect(row).toMatch(/^WH-\w+ +SUBSCRIPTION_CREATED +\d+ +503 +no +\d+ +busy$/);
      expect(stdout).toMatch(/\nsent (\d+) {2}acknowledged 0 {2}retried \1 {2}failed 0\n/);
      expect(stdout).toContain("undelivered: 0 exhausted, 1 pending\n");
    } finally {
      sim.kill();
      await endpoint.close();
    }
  });

  it("a second Ctrl-C exits at once, while the first waits on an attempt to a receiver that hangs", async () => {
    const endpoint = await scriptedEndpoint(["hang"]);
    const sim = startSimulate(["--webhook-url", endpoint.url, "--attempt-timeout", "600000"]);
    try {
      await sim.waitFor(/listening /);
      sim.send("create d");
      await sim.waitFor(/created d SUB-/);
      for (let i = 0; i < 1_500 && endpoint.received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(endpoint.received).toHaveLength(1);
      sim.interrupt();
      await sim.waitFor(/stopping \(Ctrl-C again to exit at once\)\n/);
      sim.interrupt();
      expect(await sim.exited).toBe(130);
      expect(sim.output().stderr).toContain("exiting at once: deliveries not finished are lost\n");
    } finally {
      sim.kill();
      await endpoint.close();
    }
  });

  it("refuses bad options with exit status 2 and the usage", async () => {
    const missing = await runCli(["simulate"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--webhook-url is required");
    const badRate = await runCli(["simulate", "--webhook-url", "http://127.0.0.1:1/hook", "--duplicate-rate", "2"]);
    expect(badRate.code).toBe(2);
    expect(badRate.stderr).toContain("--duplicate-rate must be a number from 0 to 1");
  });
});
