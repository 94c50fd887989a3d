import { createReceiver, inProcessQueue, memoryStore } from "merchant-webhooks";
import { createAdmin } from "merchant-webhooks/console";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { CARD_PWD, CVC, cardNotification, PAN } from "./fixtures/card-notification.js";
import { type KeptStoreBed, postgresBed, redisBed } from "./fixtures/kept-store-beds.js";

describe("an in-process queue on memoryStore", () => {
  it("says once, at start and in health(), that what it accepts is lost if the process dies", async () => {
    const { logger, lines } = captureLogger();
    const receiver = createReceiver({
      logger,
      idempotency: memoryStore(),
      queue: inProcessQueue(),
      onRenew: async () => {},
    });
    const warnings = lines().filter((line) => line.warning === "queue_not_durable");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40 });
    expect(warnings[0]!.msg).toContain("lost if this process dies");
    expect(await receiver.health()).toMatchObject({ ok: true, acceptedKept: false });
    await receiver.close();
  });
});

describe.each([
  { name: "redisStore", open: () => redisBed("inproc-kept") },
  { name: "postgresStore", open: () => postgresBed("inproc_kept") },
])("an in-process queue on $name: a dead letter keeps its notification", ({ open }) => {
  const beds: KeptStoreBed[] = [];
  afterAll(async () => {
    for (const bed of beds) await bed.close();
  });

  /** A receiver whose handler fails its first `failRuns` runs of each notification. */
  const receiverOn = (bed: KeptStoreBed, failRuns: number) => {
    const runs = new Map<string, number>();
    const done: string[] = [];
    const { logger, lines } = captureLogger();
    const receiver = createReceiver({
      logger,
      idempotency: bed.store,
      leaseMs: 2_000,
      queue: inProcessQueue(),
      onRenew: async (n) => {
        const run = (runs.get(n.id) ?? 0) + 1;
        runs.set(n.id, run);
        if (run <= failRuns) throw new Error("failing on purpose");
        done.push(n.id);
      },
    });
    return { receiver, runs, done, lines };
  };

  it("fails with its data kept (masked), a redrive runs it once more and it completes once, its data gone", {
    timeout: 60_000,
  }, async () => {
    const bed = await open();
    beds.push(bed);
    const { receiver, runs, done, lines } = receiverOn(bed, 1);
    expect(lines().filter((line) => line.warning === "queue_not_durable")).toEqual([]);
    expect(await receiver.health()).toMatchObject({ acceptedKept: true });
    const body = cardNotification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await bed.store.get(body.id))?.state === "failed", 10_000, "the record to fail");
    const kept = await bed.carried(body.id);
    expect(kept).toBeDefined();
    expect(kept).not.toContain(CVC);
    expect(kept).not.toContain(CARD_PWD);
    expect(kept).not.toContain(PAN);
    expect(await bed.store.kept?.redrivable(body.id)).toBe(true);

    // No queue given: the store's kept dead letters are what the admin API redrives.
    const admin = createAdmin({ idempotency: bed.store });
    expect(await admin.listNotifications({ state: "failed" })).toMatchObject({ items: [{ id: body.id }] });
    expect(await admin.redrive({ ids: [body.id] })).toMatchObject({ redriven: 1, skipped: [] });
    await eventually(
      async () => (await bed.store.get(body.id))?.state === "completed",
      15_000,
      "the redriven run to complete",
    );
    expect(runs.get(body.id)).toBe(2);
    expect(done).toEqual([body.id]);
    expect(await bed.carried(body.id)).toBeUndefined();
    expect(await bed.store.kept?.redrivable(body.id)).toBe(false);
    await receiver.close();
  });

  it("discarded by a person, its kept data goes with it", { timeout: 60_000 }, async () => {
    const bed = await open();
    beds.push(bed);
    const { receiver } = receiverOn(bed, 99);
    const body = cardNotification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await bed.store.get(body.id))?.state === "failed", 10_000, "the record to fail");
    expect(await bed.carried(body.id)).toBeDefined();
    const admin = createAdmin({ idempotency: bed.store });
    expect(await admin.discard(body.id, { reason: "refunded by hand" })).toMatchObject({ discarded: true });
    expect(await bed.carried(body.id)).toBeUndefined();
    await receiver.close();
  });
});
