import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hmacVerifier } from "merchant-webhooks";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runReplay } from "../../src/cli/commands/replay.js";
import { type RunningWebhook, runCli, startWebhook } from "./run-cli.js";

const SECRET = "whsec-cli-replay";

describe("merchant-webhooks replay against a running server", () => {
  let dir: string;
  let recordings: string;
  let webhook: RunningWebhook;
  const onRenew = vi.fn();
  const onCancel = vi.fn();
  const notifications = [
    buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "cli-1" }),
    buildNotification("SUBSCRIPTION_CANCELLED", undefined, { seed: "cli-2" }),
    buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "cli-3" }),
  ];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mw-cli-replay-"));
    recordings = join(dir, "recordings");
    mkdirSync(recordings);
    const entry = (notification: unknown) =>
      JSON.stringify({
        received_at: "2026-11-23T08:15:31.000Z",
        headers: { "x-request-id": "req-9" },
        notification,
        answer: { status: 200, processed: true, message: "processed" },
      });
    writeFileSync(
      join(recordings, "notifications-2026-11-23.jsonl"),
      `${notifications.slice(0, 2).map(entry).join("\n")}\n`,
    );
    writeFileSync(join(recordings, "notifications-2026-11-24.jsonl"), `${entry(notifications[2])}\n`);
    webhook = await startWebhook({
      verify: hmacVerifier({ secret: SECRET, header: "x-signature" }),
      onRenew,
      onCancel,
    });
  });
  afterAll(async () => {
    await webhook.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exits 0 and counts every notification processed when the signatures match", async () => {
    const run = await runCli(["replay", recordings, "--url", webhook.url, "--secret", SECRET, "--concurrency", "2"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^sent\s+3$/m);
    expect(run.stdout).toMatch(/^processed\s+3$/m);
    expect(run.stdout).toMatch(/^rejected\s+0$/m);
    expect(run.stdout).toMatch(/^failed\s+0$/m);
    expect(run.stdout).not.toContain("\r"); // no progress bar when stdout is not a terminal
    expect(onRenew.mock.calls.map(([n]) => n.id).sort()).toEqual([notifications[0]!.id, notifications[2]!.id].sort());
    expect(onCancel.mock.calls[0]![0]).toEqual(notifications[1]);
    expect(onCancel.mock.calls[0]![1].headers["x-request-id"]).toBe("req-9");
  });

  it("exits 1 and counts rejections by status when the server refuses them", async () => {
    const file = join(dir, "mixed.json");
    const fresh = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "cli-4" });
    const invalid = buildNotification("SUBSCRIPTION_RENEW", {
      id: "WH-no-phase",
      resource: { execution_phase: undefined },
    });
    writeFileSync(file, JSON.stringify([fresh, invalid]));
    const [wrongSecret, someInvalid] = await Promise.all([
      runCli(["replay", recordings, "--url", webhook.url, "--secret", "another-secret"]),
      runCli(["replay", file, "--url", webhook.url, "--secret", SECRET]),
    ]);

    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stdout).toMatch(/^processed\s+0$/m);
    expect(wrongSecret.stdout).toMatch(/^rejected\s+3$/m);
    expect(wrongSecret.stdout).toMatch(/^ {2}status 401\s+3$/m);
    expect(wrongSecret.stderr).toContain(`${notifications[0]!.id}: 401 signature verification failed`);

    expect(someInvalid.code).toBe(1);
    expect(someInvalid.stdout).toMatch(/^processed\s+1$/m);
    expect(someInvalid.stdout).toMatch(/^ {2}status 400\s+1$/m);
    expect(someInvalid.stderr).toContain(
      `${file}:1 WH-no-phase: 400 invalid notification: resource.execution_phase: required`,
    );
  });

  it("exits 1 and counts a notification that got no answer as failed", async () => {
    const closed = await startWebhook({});
    await closed.close();
    const run = await runCli(["replay", join(recordings, "notifications-2026-11-24.jsonl"), "--url", closed.url]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^failed\s+1$/m);
    expect(run.stderr).toContain("no answer: ECONNREFUSED");
  });

  it("reports an unreadable line with its file and line, sends the rest, and exits 1 at the end", async () => {
    const file = join(dir, "broken.jsonl");
    const before = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "cli-broken-1" });
    const after = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "cli-broken-2" });
    writeFileSync(file, `${JSON.stringify(before)}\nnot json\n${JSON.stringify(after)}\n`);
    const run = await runCli(["replay", file, "--url", webhook.url, "--secret", SECRET]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${file}:2: not sent: invalid JSON: unexpected 'n', expected a value (column 1)\n`);
    expect(run.stderr).toContain("1 unreadable entry was not sent\n");
    expect(run.stdout).toMatch(/^processed\s+2$/m);
    expect(run.stdout).toMatch(/^unreadable\s+1$/m);
    const received = onRenew.mock.calls.map(([n]) => n.id);
    expect(received).toContain(before.id);
    expect(received).toContain(after.id);
  });

  it("prints the control characters of a notification id escaped, never raw", async () => {
    const file = join(dir, "escape.json");
    const id = "WH-\x1b]0;owned\x07\x1b[2J\r\u202eX\x9b31m";
    writeFileSync(file, JSON.stringify(buildNotification("SUBSCRIPTION_RENEW", { id })));
    const run = await runCli(["replay", file, "--url", webhook.url, "--secret", "another-secret"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${file}:1 WH-\\x1b]0;owned\\x07\\x1b[2J\\r\\u202eX\\x9b31m: 401`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for raw control characters
    expect(run.stderr + run.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
  });

  describe("listing what was not processed", () => {
    const many = Array.from({ length: 25 }, (_, i) =>
      buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: `cli-many-${i}` }),
    );
    const rejectedLines = (stderr: string) =>
      stderr.split("\n").filter((line) => line.includes(": 401 signature verification failed"));
    let file: string;
    beforeAll(() => {
      file = join(dir, "many.json");
      writeFileSync(file, JSON.stringify(many));
    });

    it("lists every one when stderr is not a terminal (a file or CI log)", async () => {
      const run = await runCli([
        "replay",
        file,
        "--url",
        webhook.url,
        "--secret",
        "another-secret",
        "--concurrency",
        "5",
      ]);
      expect(run.code).toBe(1);
      expect(rejectedLines(run.stderr)).toHaveLength(25);
      expect(run.stderr).not.toContain("more not processed");
    });

    it("lists the first 20 on a terminal, and all of them with --all", async () => {
      const argv = [file, "--url", webhook.url, "--secret", "another-secret", "--concurrency", "5"];
      const terminal = () => {
        const io = {
          out: () => {},
          err: (text: string) => void (io.stderr += text),
          tty: false,
          errTty: true,
          columns: 80,
          stderr: "",
        };
        return io;
      };
      const cut = terminal();
      expect(await runReplay(argv, cut)).toBe(1);
      expect(rejectedLines(cut.stderr)).toHaveLength(20);
      expect(cut.stderr).toContain("... and 5 more not processed (--all lists every one)");
      const all = terminal();
      expect(await runReplay([...argv, "--all"], all)).toBe(1);
      expect(rejectedLines(all.stderr)).toHaveLength(25);
    });
  });

  it("--retry sends again what a receiver with ordering answers 409, so a concurrent replay is processed", async () => {
    // One subscription's renewals, a day apart, into a receiver that runs them one at a time: sent 4 at
    // once, all but one are answered 409 with Retry-After until their turn.
    const ran: string[] = [];
    const stale: string[] = [];
    let handlerMs = 1_000; // long enough that the four arrive while the first runs, even on a loaded machine
    const ordered = await startWebhook({
      ordering: true,
      onRenew: async (notification) => {
        ran.push(notification.id);
        await new Promise((resolve) => setTimeout(resolve, handlerMs));
      },
      onStale: (notification) => {
        ran.push(notification.id);
        stale.push(notification.id);
      },
    });
    const file = join(dir, "one-subscription.json");
    const renewals = [1, 2, 3, 4].map((day) =>
      buildNotification(
        "SUBSCRIPTION_RENEW",
        { resource: { id: "SUB-retry", update_time: `2026-11-0${day}T00:00:00Z` } },
        { seed: `retry-${day}` },
      ),
    );
    writeFileSync(file, JSON.stringify(renewals));
    try {
      const once = await runCli(["replay", file, "--url", ordered.url, "--concurrency", "4"]);
      expect(once.code).toBe(1);
      expect(once.stdout).toMatch(/^ {2}status 409\s+[1-3]$/m);

      ran.length = 0;
      handlerMs = 100;
      const again = renewals.map((n) => ({ ...n, id: `${n.id}-again` }));
      writeFileSync(file, JSON.stringify(again));
      const retried = await runCli(["replay", file, "--url", ordered.url, "--concurrency", "4", "--retry", "10"]);
      expect(retried.stderr).toBe("");
      expect(retried.code).toBe(0);
      // Those that went to onStale are counted as stale, not processed: four acknowledged in all.
      const count = (row: string) => Number(retried.stdout.match(new RegExp(`^${row}\\s+(\\d+)$`, "m"))?.[1]);
      expect(count("processed") + count("stale")).toBe(4);
      expect(count("stale")).toBe(ran.filter((id) => stale.includes(id)).length);
      expect(retried.stdout).toMatch(/^sent again\s+[1-3]$/m);
      // Each ran once: its handler, or onStale when a later one had completed first.
      expect([...ran].sort()).toEqual(again.map((n) => n.id).sort());
    } finally {
      await ordered.close();
    }
  });

  it("--retry reports a notification that went to onStale as stale, not processed", async () => {
    const handled: string[] = [];
    const toStale: string[] = [];
    const ordered = await startWebhook({
      ordering: true,
      onRenew: (notification) => void handled.push(notification.id),
      onStale: (notification) => void toStale.push(notification.id),
    });
    // The later renewal first: the earlier one then arrives older than its subscription's newest.
    const [earlier, later] = [1, 2].map((day) =>
      buildNotification(
        "SUBSCRIPTION_RENEW",
        { resource: { id: "SUB-stale", update_time: `2026-11-0${day}T00:00:00Z` } },
        { seed: `stale-${day}` },
      ),
    );
    const file = join(dir, "stale.json");
    writeFileSync(file, JSON.stringify([later, earlier]));
    try {
      const result = await runCli(["replay", file, "--url", ordered.url, "--retry", "3"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^processed\s+1$/m);
      expect(result.stdout).toMatch(/^stale\s+1$/m);
      expect(handled).toEqual([later!.id]);
      expect(toStale).toEqual([earlier!.id]);
    } finally {
      await ordered.close();
    }
  });

  it("exits 2 on a bad --concurrency, --scheme or --retry", async () => {
    const [concurrency, scheme, retry] = await Promise.all([
      runCli(["replay", recordings, "--url", webhook.url, "--concurrency", "0"]),
      runCli(["replay", recordings, "--url", webhook.url, "--secret", SECRET, "--scheme", "md5"]),
      runCli(["replay", recordings, "--url", webhook.url, "--retry", "21"]),
    ]);
    expect(retry.code).toBe(2);
    expect(retry.stderr).toContain("--retry must be 20 or less, got 21");
    expect(concurrency.code).toBe(2);
    expect(concurrency.stderr).toContain("--concurrency must be a positive integer");
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain("--scheme must be hmac or standard-webhooks");
  });
});
