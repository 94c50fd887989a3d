import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultRig, startFaultRig } from "./fault-rig.js";
import { runFaultScenario } from "./fault-scenario.js";
import { summaryLine } from "./summary.js";

const NOTIFICATIONS = 1_000;
/** Short, so the claims a killed receiver leaves behind run out within the test (the heartbeat keeps live ones). */
const LEASE_MS = 1_500;
const RETRY_KINDS = ["409", "503", "connection error"];

describe("fault suite: two receivers on Redis, Redis stopped and frozen, a receiver killed, a sender that re-serialises each retry", () => {
  let rig: FaultRig | undefined;

  beforeAll(async () => {
    rig = await startFaultRig(LEASE_MS);
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
  }, 60_000);

  it(`processes each of ${NOTIFICATIONS} notifications, none lost, and twice only where the kill stopped it after its effect`, async () => {
    const result = await runFaultScenario(rig!, { notifications: NOTIFICATIONS, giveUpMs: 40_000 });
    const { figures, sent, sentAgain, verdict } = result;
    console.log(summaryLine(figures));
    console.log(`answers by the phase they were sent in: ${JSON.stringify(figures.answers_by_phase)}`);

    // The faults reached the sender: 503 while Redis was stopped and while it hung, failed connections
    // (or 409 on the claims it left) after the receiver was killed.
    expect(figures.answers_by_phase["redis stopped"]?.["503"]).toBeGreaterThan(0);
    expect(figures.answers_by_phase["redis frozen"]?.["503"]).toBeGreaterThan(0);
    expect((figures.answers["connection error"] ?? 0) + (figures.answers["409"] ?? 0)).toBeGreaterThan(0);

    // Every notification was acknowledged; each answer said "retry" exactly when it was not a 200, and
    // nothing but "busy elsewhere" (409), "store unavailable" (503) or a dead receiver asked for one.
    expect(figures.acknowledged).toBe(NOTIFICATIONS);
    expect(sent.inconsistent).toEqual([]);
    expect(Object.keys(figures.answers).filter((kind) => kind !== "200" && !RETRY_KINDS.includes(kind))).toEqual([]);

    // Once background completions have landed, every record is completed, except where the killed
    // process took the completion with it (its handler's effect happened, the record was not yet
    // written, e.g. still being retried after the Redis outage). None is missing: the restart kept them.
    expect(result.ids.filter((id) => !result.afterLoad.get(id)?.state)).toEqual([]);
    expect(result.leftOpenUnexplained).toEqual([]);

    // Delivered again, every notification is acknowledged, as already processed unless the kill had
    // left its record open.
    expect(figures.second_delivery_acknowledged).toBe(NOTIFICATIONS);
    expect(sentAgain.inconsistent).toEqual([]);
    expect(sentAgain.acknowledgedAs["already processed"] ?? 0).toBeGreaterThanOrEqual(
      NOTIFICATIONS - figures.left_open_after_load,
    );

    // Nothing lost: every notification's effect happened. Twice only for a notification the killed
    // process had taken past its effect without recording the completion, and only through a second
    // claim once the dead process's lease ran out.
    expect(verdict.lost).toEqual([]);
    expect(verdict.unexplained).toEqual([]);
    expect(verdict.explained.filter((id) => result.atEnd.get(id)!.attempts < 2)).toEqual([]);
    expect(figures.records_not_completed).toBe(0);
  }, 120_000);
});
