import type { SubscriptionNotification } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { laneOf } from "../pg-boss/fixtures/lane.js";
import { captureLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted, notification } from "../support/notifications.js";
import { eventually, sleep } from "../support/redis.js";
import { TRANSPORTS, transportBed } from "./transports.js";

// A job whose own data was changed where the queue keeps it: no payload fingerprint any more, so no
// worker can run it. (A sealed payload changed, a sealing key gone, a truncated write read the same.)
const unreadable = (data: Record<string, any>) => ({ ...data, fingerprint: 42 });

describe.each(TRANSPORTS)("a job whose own data is unreadable, on $name", (transport) => {
  const bed = transportBed(transport, "unread");

  it("its record is failed with it: listed by the console's failed filter, and the queue's redrive finds its letter", async () => {
    const line = bed.line("unread", { attempts: 3 });
    const sent = notification();
    expect(await line.deliver(sent)).toBe(200);
    await line.editJobData(sent.id, unreadable);
    const ran: string[] = [];
    bed.worker("unread", { onRenew: async (n: SubscriptionNotification) => void ran.push(n.id) });

    await eventually(async () => (await line.deadLetters()).includes(sent.id), 15_000, "the record failed");
    const detail = await line.admin.getNotification(sent.id);
    // The reason says what went wrong without a word of the payload.
    expect(detail?.record).toMatchObject({ state: "failed", outcome: "invalid_job_data" });
    await eventually(async () => (await line.offeredForRedrive()).includes(sent.id), 15_000, "the queue's dead letter");
    expect(ran).toEqual([]);
  });

  it("as its ordered lane's first, the lane's later notifications run, in order, without waiting for a sweep", async () => {
    const line = bed.line("lane", { ordering: true, attempts: 3 });
    const sub = `SUB-${process.pid}-${transport.kind}-unread`;
    const sent = laneOf(sub, 3, 10);
    const [first, ...later] = sent.map((n) => n.id);
    for (const body of sent) await deliverUntilAccepted(line.receiver, body, 20);
    // The first of the lane holds its job (the lane's drain job, on a store that keeps lanes whole).
    await line.editJobData(first!, unreadable);
    const ran: string[] = [];
    bed.worker("lane", { onRenew: async (n: SubscriptionNotification) => void ran.push(n.id) });

    await eventually(() => line.completed(later), 15_000, "the lane's later notifications");
    expect(ran).toEqual(later);
    expect(await line.deadLetters(sub)).toEqual([first]);
    // (With a job per notification, a later one's job may be handed the first by the lane before the
    // first's own job is looked at: its outcome then says its job was gone or unreadable by then.)
    expect((await line.admin.getNotification(first!))?.record?.state).toBe("failed");
    await eventually(async () => (await line.offeredForRedrive()).includes(first!), 15_000, "the queue's dead letter");
  });

  it("data naming another notification than its job fails no one's record, and says so", async () => {
    // The other notification waits in another queue of the same store, which no worker takes.
    const other = notification();
    expect(await bed.line("unread-else").deliver(other)).toBe(200);
    const line = bed.line("unread-moved");
    const sent = notification();
    expect(await line.deliver(sent)).toBe(200);
    await line.editJobData(sent.id, (data) => ({ ...unreadable(data), id: other.id }));
    const { logger, lines } = captureLogger();
    bed.worker("unread-moved", { onRenew: async () => {}, logger });

    await eventually(
      () => lines().some((l) => l.msg === "job data names another notification than its job; no record failed for it"),
      15_000,
      "the warning",
    );
    await sleep(200);
    expect((await line.admin.getNotification(other.id))?.record?.state).toBe("queued");
    // Its own record is not named by anything this worker can trust: it stays as it was too.
    expect((await line.admin.getNotification(sent.id))?.record?.state).toBe("queued");
  });
});
