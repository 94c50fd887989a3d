import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hmacVerifier } from "merchant-webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSimulate } from "../../src/cli/commands/simulate.js";
import { recordingWebhook } from "../simulator/recording-webhook.js";
import { scriptedEndpoint } from "../simulator/scripted-endpoint.js";
import { captureIo } from "./capture-io.js";
import { type RunningWebhook, startWebhook } from "./run-cli.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async function scenarioFile(text: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), "mw-sim-progress-")), "scenario.txt");
  await writeFile(file, text);
  return file;
}

describe("merchant-webhooks simulate shows what it does", () => {
  let webhook: RunningWebhook;
  let calls: string[];
  let lifecycle: string;
  beforeAll(async () => {
    ({ webhook, calls } = await recordingWebhook(SECRET));
    lifecycle = await scenarioFile("create a\nrenew a\ncancel a\n");
  });
  afterAll(() => webhook.close());

  it("by default lays the platform's schedule over 10 s, not 27.6 h, and prints a plain line per attempt off a terminal", async () => {
    const io = captureIo();
    const code = await runSimulate(
      ["--webhook-url", webhook.url, "--secret", SECRET, "--scenario", lifecycle, "--exit"],
      io,
    );
    expect(code).toBe(0);
    expect(io.stdout).toContain("deliveries: up to 8 attempts over 9.9 s (--real-time: the platform's 27.6 h)\n");
    for (const type of ["SUBSCRIPTION_CREATED", "SUBSCRIPTION_RENEW", "SUBSCRIPTION_CANCELLED"])
      expect(io.stdout).toMatch(new RegExp(`^WH-\\w+ ${type} attempt 1: 200 processed: acknowledged$`, "m"));
    expect(io.stdout).toContain("\nsent 3  acknowledged 3  retried 0  failed 0\nundelivered: 0 exhausted, 0 pending\n");
    expect(io.stdout).not.toContain("\r");
  });

  it("--real-time announces the platform's own schedule", async () => {
    const io = captureIo();
    const empty = await scenarioFile("# nothing\n");
    expect(await runSimulate(["--webhook-url", webhook.url, "--real-time", "--scenario", empty, "--exit"], io)).toBe(0);
    expect(io.stdout).toContain("deliveries: up to 8 attempts over 27.6 h\n");
  });

  it("draws one status line in place on a terminal", async () => {
    const io = captureIo({ tty: true });
    const code = await runSimulate(
      ["--webhook-url", webhook.url, "--secret", SECRET, "--scenario", lifecycle, "--exit"],
      io,
    );
    expect(code).toBe(0);
    expect(io.stdout).toContain("\r\x1b[2Ksent 1  acknowledged 1  retried 0  failed 0");
    expect(io.stdout).toContain("\r\x1b[2Ksent 3  acknowledged 3  retried 0  failed 0");
    expect(io.stdout).not.toContain(" attempt 1: ");
    // The status line is cleared before the summary, which ends with a line break.
    expect(io.stdout).toContain("\r\x1b[2Ksent 3  acknowledged 3  retried 0  failed 0\n");
  });

  it("counts retries and failures, and exits 1 when a notification was not delivered", async () => {
    const endpoint = await scriptedEndpoint([{ status: 503, body: { processed: false, message: "store down" } }]);
    try {
      const io = captureIo();
      const file = await scenarioFile("create b\n");
      const code = await runSimulate(
        ["--webhook-url", endpoint.url, "--retry-schedule", "0,10", "--scenario", file, "--exit"],
        io,
      );
      expect(code).toBe(1);
      expect(io.stdout).toMatch(/^WH-\w+ SUBSCRIPTION_CREATED attempt 1: 503 store down: will retry$/m);
      expect(io.stdout).toMatch(/^WH-\w+ SUBSCRIPTION_CREATED attempt 2: 503 store down: failed, schedule used up$/m);
      expect(io.stdout).toContain("sent 2  acknowledged 0  retried 1  failed 1\n");
      expect(io.stdout).toContain("undelivered: 1 exhausted, 0 pending\n");
    } finally {
      await endpoint.close();
    }
  });

  it("--reorder-rate holds notifications back so later ones overtake them", async () => {
    const io = captureIo();
    const file = await scenarioFile(`create r\n${"renew r\n".repeat(7)}settle\n`);
    calls.length = 0;
    const code = await runSimulate(
      [
        ...["--webhook-url", webhook.url, "--secret", SECRET, "--scenario", file, "--exit"],
        ...["--reorder-rate", "1", "--reorder-window", "400", "--delay", "5", "--seed", "7"],
      ],
      io,
    );
    expect(code).toBe(0);
    const sentIds = [...io.stdout.matchAll(/^renew r SUB-\d+ (WH-\w+)/gm)].map((match) => match[1]);
    const arrivedIds = calls.filter((call) => call.startsWith("renew ")).map((call) => call.split(" ")[2]);
    expect(sentIds).toHaveLength(7);
    expect([...arrivedIds].sort()).toEqual([...sentIds].sort());
    expect(arrivedIds).not.toEqual(sentIds);
  });

  it("--scheme hmac signs for an app that uses hmacVerifier, in the header --signature-header names", async () => {
    const renewed: string[] = [];
    const hmac = await startWebhook({
      verify: hmacVerifier({ secret: "plain-shared-secret", header: "x-hub-signature" }),
      onRenew: (notification) => void renewed.push(notification.id),
      onCreated: () => {},
    });
    try {
      const file = await scenarioFile("create h\nrenew h\n");
      const signed = ["--secret", "plain-shared-secret", "--scheme", "hmac", "--signature-header", "x-hub-signature"];
      const io = captureIo();
      expect(await runSimulate(["--webhook-url", hmac.url, ...signed, "--scenario", file, "--exit"], io)).toBe(0);
      expect(io.stdout).toContain("sent 2  acknowledged 2  retried 0  failed 0\n");
      expect(renewed).toHaveLength(1);
      // The same deliveries signed for the default header are refused: the header option is used.
      const wrongHeader = captureIo();
      const code = await runSimulate(
        [
          ...["--webhook-url", hmac.url, "--secret", "plain-shared-secret", "--scheme", "hmac"],
          ...["--retry-schedule", "0", "--scenario", file, "--exit"],
        ],
        wrongHeader,
      );
      expect(code).toBe(1);
      expect(wrongHeader.stdout).toMatch(/SUBSCRIPTION_RENEW attempt 1: 401 /);
      expect(renewed).toHaveLength(1);
    } finally {
      await hmac.close();
    }
  });
});
