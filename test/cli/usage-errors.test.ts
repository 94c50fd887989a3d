import { describe, expect, it } from "vitest";
import { runSend } from "../../src/cli/commands/send.js";
import { runSimulate } from "../../src/cli/commands/simulate.js";
import { captureIo } from "./capture-io.js";
import { runCli } from "./run-cli.js";

const HOOK = "http://127.0.0.1:1/hook";

/** What a user sees for a usage error: the message, the usage line, where to read more; nothing else. */
function expectShortUsage(stderr: string, command: string, message: string | RegExp) {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(3); // the message is one line
  if (typeof message === "string") expect(lines[0]).toContain(message);
  else expect(lines[0]).toMatch(message);
  expect(lines[1]).toMatch(new RegExp(`^Usage: merchant-webhooks ${command} `));
  expect(lines[2]).toBe(`Run "merchant-webhooks ${command} --help" for its options.`);
  expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe("usage errors", () => {
  it("print one line and the command's short usage, exit 2, as a process", async () => {
    const [port, missing, unknown] = await Promise.all([
      runCli(["simulate", "--port", "99999", "--webhook-url", HOOK]),
      runCli(["replay", "x.json"]),
      runCli(["reply", "x.json"]),
    ]);
    expect(port.code).toBe(2);
    expectShortUsage(port.stderr, "simulate", "--port must be a port number from 0 to 65535, got 99999");
    expect(missing.code).toBe(2);
    expectShortUsage(missing.stderr, "replay", "--url is required");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'unknown command "reply": the commands are replay, send, validate, simulate, redrive, inspect, reconcile\n' +
        'Run "merchant-webhooks --help" for what each does.\n',
    );
  });

  it.each([
    ["3000000000", "above the longest timer"],
    ["2147483648", "one past the longest timer"],
    ["0", "zero"],
    ["-5", "negative"],
    ["NaN", "not a number"],
    ["1e3", "not a whole number of ms"],
  ])("send --timeout %s (%s) is a usage error", async (value) => {
    const io = captureIo();
    expect(await runSend(["renew", "--url", HOOK, `--timeout=${value}`], io)).toBe(2);
    expectShortUsage(
      io.stderr,
      "send",
      `--timeout must be a whole number of milliseconds from 1 to 2147483647 (about 24.8 days), got ${value}`,
    );
  });

  it.each([
    [
      ["--attempt-timeout", "3000000000"],
      "--attempt-timeout must be a whole number of milliseconds from 1 to 2147483647",
    ],
    [["--attempt-timeout", "0"], "--attempt-timeout must be a whole number of milliseconds from 1"],
    [["--retry-schedule", "0,1e300"], "--retry-schedule must be a whole number of milliseconds from 0 to 2147483647"],
    [["--retry-schedule", "0,-1"], "--retry-schedule must be a whole number of milliseconds from 0"],
    [["--retry-schedule", "0,,5"], "--retry-schedule must be a whole number of milliseconds"],
    [["--time-scale", "1e300"], /^--time-scale 1e300 makes the longest delay 3\.6e\+303 ms, beyond 2147483647 ms/],
    [["--time-scale", "0"], "--time-scale must be a number above 0"],
    [["--time-scale", "NaN"], "--time-scale must be a number above 0"],
    [["--real-time", "--time-scale", "0.5"], "--real-time and --time-scale contradict each other"],
    [["--delay=-1"], "--delay must be a whole number of milliseconds from 0"],
    [["--reorder-window", "99999999999"], "--reorder-window must be a whole number of milliseconds"],
    [["--reorder-rate", "1.5"], "--reorder-rate must be a number from 0 to 1, got 1.5"],
    [["--duplicate-rate", "NaN"], "--duplicate-rate must be a number from 0 to 1, got NaN"],
    [["--port=-1"], "--port must be a port number from 0 to 65535"],
    [["--seed", "x"], "--seed must be a whole number"],
    [["--secret", "plain"], '--secret for standard-webhooks must be "whsec_" followed by base64'],
    [["--scheme", "hmac"], "--scheme and --signature-header need --secret"],
    [["--scheme", "jwt", "--secret", "s"], "--scheme must be hmac or standard-webhooks, got jwt"],
    [
      ["--secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "--signature-header", "x-sig"],
      "--signature-header applies to --scheme hmac only",
    ],
  ])("simulate %j is a usage error", async (args, message) => {
    const io = captureIo();
    expect(await runSimulate(["--webhook-url", HOOK, ...args], io)).toBe(2);
    expectShortUsage(io.stderr, "simulate", message);
    expect(io.stdout).toBe(""); // nothing started
  });
});
