import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { pgBossJobIdFor as jobIdFor, pgBossQueue } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { bedWorker, laneOf } from "./fixtures/lane.js";

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
  function receiverOn(name: string, ordering = false) {
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bossSchema,
      jobOptions: { retryLimit: 3, retryDelay: 1, retryBackoff: false },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering });
    cleanup.push(() => receiver.close());
    return receiver;
  }
  function startWorker(name: string) {
    const worker = bedWorker(bed, name, { onRenew });
    cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
  }
  function setup(name: string, ordering = false) {
    const receiver = receiverOn(name, ordering);
    startWorker(name);
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

  it("the waiters of an ordered subscription, run from its list: attempt 1 everywhere", async () => {
    const receiver = setup("count-ordered", true);
    const sub = `SUB-${process.pid}-count`;
    const sent = laneOf(sub, 4, 6);
    for (const body of sent) expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(completed(sent.map((n) => n.id)), 15_000, "the subscription to drain");
    for (const n of sent) {
      expect(seen.get(n.id)).toEqual([1]);
      expect(await store.get(n.id)).toMatchObject({ state: "completed", attempts: 1 });
      expect(await retries("count-ordered", n.id)).toBe(0);
    }
  });

  it("a notification whose own job hands over an older one first, then gets its turn from the list: attempt 1", async () => {
    const receiver = receiverOn("count-behind", true);
    const [older, newer] = laneOf(`SUB-${process.pid}-behind`, 2, 7);
    for (const body of [older!, newer!]) expect((await receiver.handle(post(body))).status).toBe(200);
    // The older one's job is not ready yet: the worker's first look finds only the newer one's, whose
    // claim runs the older one first (from its job), then its own notification as the list's next.
    await bed.pool.query(
      `UPDATE "${bossSchema}".job SET start_after = now() + interval '1 hour' WHERE name = $1 AND id = $2`,
      ["count-behind", jobIdFor("count-behind", older!.id)],
    );
    startWorker("count-behind");
    await eventually(completed([older!.id, newer!.id]), 15_000, "both to complete");
    for (const n of [older!, newer!]) {
      expect(seen.get(n.id)).toEqual([1]);
      expect(await store.get(n.id)).toMatchObject({ state: "completed", attempts: 1 });
    }
  });
});
