import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually, sleep } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

/** Short leases and handler limits, so a frozen worker's notification is another's within seconds. */
const LIMITS = { LEASE_MS: "1000", HANDLER_TIMEOUT_MS: "3000" };

describe.each(TRANSPORTS)("a worker frozen (SIGSTOP) past its lease, on $name", (transport) => {
  const bed = transportBed(transport, "frozen");

  it("the other worker runs it; resumed, the frozen one neither completes nor runs it again, and logs no error", {
    timeout: 120_000,
  }, async () => {
    const line = bed.line("frozen");
    const logFile = join(tmpdir(), `mw-frozen-${transport.kind}-${process.pid}-${Date.now()}.log`);
    // Its handler would take 20 s: mid-run when frozen, and past its time limit when it resumes.
    const frozen = await bed.spawn("frozen", { ...LIMITS, HANDLER_MS: "20000", LOG_FILE: logFile });
    const body = notification();
    expect(await line.deliver(body)).toBe(200);
    await eventually(async () => (await bed.rows("started", body.id)) === 1, 15_000, "the handler to start");
    frozen.kill("SIGSTOP");

    await bed.spawn("frozen", LIMITS);
    await eventually(
      async () => (await bed.store.get(body.id))?.state === "completed",
      30_000,
      "the other worker to complete it",
    );
    frozen.kill("SIGCONT");
    await eventually(
      async () => (await bed.rows("aborted", body.id)) === 1,
      15_000,
      "the resumed handler to see its signal abort",
    );
    // Time for the resumed worker to try to record its run, and log what it makes of it.
    await sleep(1_500);

    expect(await bed.rows("started", body.id)).toBe(2);
    expect(await bed.rows("effects", body.id)).toBe(1);
    expect(await bed.store.get(body.id)).toMatchObject({ state: "completed" });
    expect(await line.admin.listNotifications({ state: "failed" })).toMatchObject({ items: [] });
    const errors = logLines(logFile).filter((entry) => entry.level >= 50);
    expect(errors).toEqual([]);
    expect(frozen.child.exitCode).toBeNull();
  });

  it("completed by the other worker meanwhile: resumed, the frozen one says so once at info level, counts no attempt and fails no job", {
    timeout: 120_000,
  }, async () => {
    const line = bed.line("elsewhere");
    const stamp = `${transport.kind}-${process.pid}-${Date.now()}`;
    const frozenLog = join(tmpdir(), `mw-elsewhere-frozen-${stamp}.log`);
    const otherLog = join(tmpdir(), `mw-elsewhere-other-${stamp}.log`);
    const frozen = await bed.spawn("elsewhere", { ...LIMITS, HANDLER_MS: "20000", LOG_FILE: frozenLog });
    const body = notification();
    expect(await line.deliver(body)).toBe(200);
    await eventually(async () => (await bed.rows("started", body.id)) === 1, 15_000, "the handler to start");
    frozen.kill("SIGSTOP");

    await bed.spawn("elsewhere", { ...LIMITS, LOG_FILE: otherLog });
    await eventually(
      async () => (await bed.store.get(body.id))?.state === "completed",
      30_000,
      "the other worker to complete it",
    );
    frozen.kill("SIGCONT");
    const elsewhere = () =>
      logLines(frozenLog).filter(
        (entry) => entry.notification_id === body.id && entry.outcome === "completed_elsewhere",
      );
    await eventually(
      async () => elsewhere().length > 0,
      15_000,
      "the resumed worker to find the notification completed elsewhere",
    );
    // Time for anything else the resumed worker would do about it (a failed job, an error line).
    await sleep(2_000);

    expect(elsewhere()).toMatchObject([{ level: 30 }]);
    expect(await bed.rows("effects", body.id)).toBe(1);
    const [seen] = await bed.attempts("effects", body.id);
    expect(await bed.store.get(body.id)).toMatchObject({ state: "completed", attempts: seen });
    expect(await line.deadLetters()).toEqual([]);
    expect(await line.offeredForRedrive()).toEqual([]);
    const errors = [...logLines(frozenLog), ...logLines(otherLog)].filter((entry) => entry.level >= 50);
    expect(errors).toEqual([]);
  });
});

/** A child worker's log lines (LOG_FILE), read as they are now. */
function logLines(file: string): Array<{ level: number; msg?: string; [field: string]: unknown }> {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((text) => text.trim() !== "")
    .map((text) => JSON.parse(text));
}
