import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { pgBossJobIdFor as jobIdFor, pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { bedWorker, laneOf } from "./fixtures/lane.js";

const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: json(body),
});

describe("one attempt count on pg-boss: the record, the job and ctx.attempt agree", () => {
  const bed = pgBossBed("pgbatt", () => "");
  const { bossSchema, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });
  const seen = new Map<string, number[]>();
  const failOnce = new Set<string>();
  const onRenew = async (n: SubscriptionNotification, ctx: HandlerContext) => {
    seen.set(n.id, [...(seen.get(n.id) ?? []), ctx.attempt]);
    if (failOnce.delete(n.id)) throw new Error("transient");
  };
  function setup(name: string, ordering = false) {
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bossSchema,
      jobOptions: { retryLimit: 3, retryDelay: 1, retryBackoff: false },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering });
    const worker = bedWorker(bed, name, { onRenew });
    cleanup.push(
      () => worker.close({ timeoutMs: 1_000 }),
      () => receiver.close(),
    );
    return receiver;
  }
  const completed = (ids: string[]) => async () =>
    (await Promise.all(ids.map((id) => store.get(id)))).every((record) => record?.state === "completed");
  const retries = async (name: string, id: string) => (await bed.boss.getJobById(name, jobIdFor(name, id)))?.retryCount;

  it("a notification that ran once: attempt 1 everywhere; one that failed once: attempt 2 everywhere", async () => {
    const receiver = setup("count");
    const [once, twice] = [notification(), notification()];
    failOnce.add(twice.id);
    for (const body of [once, twice]) expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(completed([once.id, twice.id]), 15_000, "both to complete");

    expect(seen.get(once.id)).toEqual([1]);
    expect(await store.get(once.id)).toMatchObject({ state: "completed", attempts: 1 });
    // pg-boss counts retries: none for a first run that succeeded.
    expect(await retries("count", once.id)).toBe(0);

    expect(seen.get(twice.id)).toEqual([1, 2]);
    expect(await store.get(twice.id)).toMatchObject({ state: "completed", attempts: 2 });
    expect(await retries("count", twice.id)).toBe(1);
  });

  it("the waiters of an ordered subscription, run from its list: one run each, one count everywhere", async () => {
    const receiver = setup("count-ordered", true);
    const sub = `SUB-${process.pid}-count`;
    const sent = laneOf(sub, 4, 6);
    for (const body of sent) expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(completed(sent.map((n) => n.id)), 15_000, "the subscription to drain");
    for (const n of sent) {
      // One run each, and the record says what the handler saw. A waiter whose own job met the lane
      // busy before the drain reached it can read attempt 2 (one run, two takes): the figure is the
      // same on the record and in ctx.attempt, which is what the console and the logs show.
      const runs = seen.get(n.id) ?? [];
      expect(runs).toHaveLength(1);
      expect(await store.get(n.id)).toMatchObject({ state: "completed", attempts: runs[0] });
      expect(await retries("count-ordered", n.id)).toBe(0);
    }
  });
});
