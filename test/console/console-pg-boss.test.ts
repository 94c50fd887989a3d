import { createReceiver } from "merchant-webhooks";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import { createPgBossWorker, pgBossQueue, pgBossRedrive } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { jobStates } from "../pg-boss/fixtures/boss.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { consoleSession, readable } from "./console-session.js";

/**
 * The console as a new user sets it up on PostgreSQL with pg-boss: `postgresStore`, `pgBossQueue`,
 * ordering on, no recorder; a handler that fails until "fixed", one run per job.
 */
describe("the console on PostgreSQL with pg-boss", () => {
  const bed = pgBossBed("pgbconsole", () => "");
  const { bossSchema, pool, store } = bed;
  const runs = new Map<string, number>();
  const broken = { value: true };
  const stops: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  function setup(name: string) {
    const queue = pgBossQueue({ boss: bed.boss, name, schema: bossSchema, jobOptions: { retryLimit: 0 } });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const handler = async (n: { id: string }) => {
      runs.set(n.id, (runs.get(n.id) ?? 0) + 1);
      if (broken.value) throw new Error("ledger refused");
    };
    const handlers = { onRenew: handler, onCancel: handler };
    const worker = createPgBossWorker({
      boss: bed.boss,
      name,
      schema: bossSchema,
      idempotency: store,
      ...handlers,
      logger: silentLogger(),
      pollingIntervalMs: 100,
    });
    stops.push(
      () => worker.close({ timeoutMs: 2_000 }),
      () => receiver.close(),
    );
    const admin = createAdmin({ idempotency: store, queue });
    const ops = consoleSession(
      consoleHandler({ admin, authorize: (request) => request.headers.get("authorization") === "Bearer ops" }),
    );
    return { queue, receiver, admin, ops, deadLetters: () => jobStates(pool, bossSchema, `${name}_dead_letter`) };
  }

  it("shows a dead letter's event type, subscription and job; redrives it with its failure kept in the timeline", async () => {
    const { receiver, admin, ops, deadLetters } = setup("shown");
    const body = notification("SUBSCRIPTION_RENEW");
    body.resource.id = "SUB-PGB";
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await deadLetters()).created === 1, 20_000, "the dead letter");

    const overview = readable((await ops.get("/console/")).text);
    expect(overview).not.toContain("No BullMQ queue configured");
    expect(overview).toContain("Queue (pg-boss)");
    expect(overview).toContain("dead letters (failed set) 1");
    expect(overview).not.toContain("(unknown)");
    expect(overview).toContain("SUBSCRIPTION_RENEW 1");

    const page = await ops.get(`/console/notifications/${body.id}`);
    const text = readable(page.text);
    expect(text).toContain("event type SUBSCRIPTION_RENEW");
    expect(text).toContain("subscription SUB-PGB");
    expect(text).not.toContain("No job");
    expect(text).toMatch(/Job state failed attempts made 1/);
    // No recording: nothing offers to replay from one.
    expect(text).not.toContain("Replay from recording");
    expect(page.text).toContain(">Redrive</button>");

    // The list's filters find it by event type and by subscription.
    expect(readable((await ops.get("/console/notifications?eventType=SUBSCRIPTION_RENEW")).text)).toContain(body.id);
    expect(readable((await ops.get("/console/dead-letters?subscriptionId=SUB-PGB")).text)).toContain(body.id);

    // Replay with nothing to replay from: said on a page with a way on, not a bare 404.
    const replayed = await ops.post("/console/actions/replay", [["id", "WH-never-sent"]]);
    expect(replayed.status).toBe(404);
    // The notice is one of the console's own (a link cannot make it say anything else).
    expect(readable(replayed.text)).toContain("nothing to replay from: no recording and no failed job");
    expect(replayed.text).toContain("<nav>");

    broken.value = false;
    const redriven = await ops.post("/console/actions/redrive", [
      ["mode", "ids"],
      ["id", body.id],
    ]);
    expect(readable(redriven.text)).toContain("redriven 1 of 1");
    await eventually(async () => (await store.get(body.id))?.state === "completed", 20_000, "the redriven run");
    expect(runs.get(body.id)).toBe(2);
    expect(await deadLetters()).toEqual({});

    // One count of attempts on the record, the job and the page (whatever pg-boss counts per run).
    const detail = (await admin.getNotification(body.id))!;
    expect(detail.record?.state).toBe("completed");
    expect(detail.job).toMatchObject({ state: "completed", attemptsMade: detail.record!.attempts });
    const attempts = detail.record!.attempts;
    const after = readable((await ops.get(`/console/notifications/${body.id}`)).text);
    expect(after).toContain(`attempts ${attempts} outcome processed`);
    expect(after).toContain(`attempts made ${attempts}`);
    // The failure it was redriven after is still in its timeline, before its completion.
    expect(after).toMatch(
      /Timeline failed \S+ — \d+ attempts?; handler_failed \(then redriven\) .* completed \S+ — \d+ attempts; processed/,
    );
    expect(detail.timeline.map((event) => event.what)).toEqual(["failed", "queued", "attempt", "completed"]);

    // Redriven again, a completed one says why nothing ran.
    const again = await ops.post("/console/actions/redrive", [
      ["mode", "ids"],
      ["id", body.id],
    ]);
    expect(readable(again.text)).toContain("redriven 0 of 1; 1 skipped: each one's page says why");
    // The admin API gives the reason itself, per id.
    expect(await admin.redrive({ ids: [body.id] })).toMatchObject({
      redriven: 0,
      skipped: [{ id: body.id, reason: expect.stringMatching(/^already completed: /) }],
    });
    expect(runs.get(body.id)).toBe(2);
  }, 60_000);

  it("discards a dead letter: its pg-boss dead-letter job is gone, and redrive offers it no more", async () => {
    broken.value = true;
    const { receiver, admin, deadLetters } = setup("discarded");
    const body = notification("SUBSCRIPTION_CANCELLED");
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await deadLetters()).created === 1, 20_000, "the dead letter");

    expect(await admin.discard(body.id, { reason: "refunded by hand" })).toMatchObject({ discarded: true });
    expect(await deadLetters()).toEqual({});
    expect(await pgBossRedrive({ boss: bed.boss, name: "discarded", schema: bossSchema, dryRun: true })).toEqual({
      redriven: [],
      notFailed: [],
    });
    expect((await admin.getNotification(body.id))!.job).toBeUndefined();
    expect(runs.get(body.id)).toBe(1);
  }, 60_000);

  it("answers a bad page size with a 400 page and a way back", async () => {
    const { ops } = setup("limits");
    const page = await ops.get("/console/notifications?limit=-5");
    expect(page.status).toBe(400);
    expect(readable(page.text)).toContain("limit must be a whole number from 1 to 500; got -5");
    expect(page.text).toContain('href="/console/">Back to the overview</a>');
    const cursor = await ops.get("/console/notifications?cursor=nonsense");
    expect(cursor.status).toBe(400);
    expect(readable(cursor.text)).toContain("cursor is not one a page gave");
  });
});
