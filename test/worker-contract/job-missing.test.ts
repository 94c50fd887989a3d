import type { SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { laneOf } from "../pg-boss/fixtures/lane.js";
import { captureLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

describe.each(TRANSPORTS)("a lane's notification whose job is gone, on $name", (transport) => {
  const bed = transportBed(transport, "missing");
  // redisStore keeps each waiting notification's data in its lane: the queue's job is not needed to run it.
  const laneKeepsData = transport.kind === "bullmq-redis";

  it(laneKeepsData
    ? "runs from the data its lane keeps; the lane runs in order, no error logged"
    : "is failed (job_missing), logged at warn level, not error; the rest of its lane runs in order", {
    timeout: 60_000,
  }, async () => {
    const line = bed.line("missing", { ordering: true });
    const sent = laneOf(`SUB-${process.pid}-${transport.kind}-missing`, 3, 10);
    const [first, gone, last] = sent.map((n) => n.id) as [string, string, string];
    for (const body of sent) await deliverUntilAccepted(line.receiver, body, 20);
    await bed.removeJobs("missing", gone);

    const ran: string[] = [];
    const captured = captureLogger();
    bed.worker("missing", {
      onRenew: async (n: SubscriptionNotification) => void ran.push(n.id),
      logger: captured.logger,
    });
    await eventually(() => line.completed([first, last]), 30_000, "the rest of the lane to run");

    const errors = captured.lines().filter((entry) => entry.level >= 50);
    expect(errors).toEqual([]);
    if (laneKeepsData) {
      expect(ran).toEqual([first, gone, last]);
      expect(await line.completed([gone])).toBe(true);
      return;
    }
    expect(ran).toEqual([first, last]);
    expect(await bed.store.get(gone)).toMatchObject({ state: "failed" });
    const warned = captured
      .lines()
      .filter((entry) => entry.level === 40 && entry.outcome === "job_missing")
      .map((entry) => [entry.notification_id, entry.msg]);
    // Once: failed in its claim's own transaction, it is never back in its lane for a second job to take.
    expect(warned).toEqual([[gone, "queued notification has no job to run from"]]);
  });
});
