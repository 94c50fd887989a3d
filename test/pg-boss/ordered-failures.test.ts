import {
  createReceiver,
  type HandlerContext,
  NonRetriableError,
  RetryAfterError,
  type SubscriptionNotification,
} from "merchant-webhooks";
import { pgBossQueue, pgBossRedrive as redrive } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";
import { bedWorker, laneOf } from "./fixtures/lane.js";

const COUNT = 5;

describe("failures in an ordered lane on pg-boss", () => {
  const bed = pgBossBed(
    "pgbolane",
    (schema) => `CREATE TABLE "${schema}".effects (seq serial PRIMARY KEY, notification_id text NOT NULL);
      CREATE TABLE "${schema}".stale (notification_id text NOT NULL)`,
  );
  const { schema, bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });
  const effects = async () =>
    (await pool.query(`SELECT notification_id FROM "${schema}".effects ORDER BY seq`)).rows.map(
      (r) => r.notification_id,
    );
  const staleCount = async () => (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".stale`)).rows[0].n;

  /** A receiver with ordering and two workers on queue `name`, whose handler is `onRenew`; 3 runs, 1 s apart. */
  function lane(
    name: string,
    onRenew: (n: SubscriptionNotification, ctx: HandlerContext) => Promise<void>,
    handlerTimeoutMs?: number,
    workers = 2,
  ) {
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bossSchema,
      jobOptions: { retryLimit: 2, retryDelay: 1, retryBackoff: false },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const onStale = async (n: SubscriptionNotification, ctx: HandlerContext) => {
      await ctx.transaction.query(`INSERT INTO "${schema}".stale (notification_id) VALUES ($1)`, [n.id]);
    };
    // Two workers, as two processes would run: the lane's order holds across them.
    const startWorker = () => {
      const worker = bedWorker(bed, name, { onRenew, onStale, ...(handlerTimeoutMs ? { handlerTimeoutMs } : {}) });
      cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
    };
    for (let i = 0; i < workers; i++) startWorker();
    cleanup.push(() => receiver.close());
    const sub = `SUB-${process.pid}-${name}`;
    const sent = laneOf(sub, COUNT, 5);
    return { receiver, sent, startWorker };
  }
  const write = async (n: SubscriptionNotification, ctx: HandlerContext) => {
    await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
  };

  it("a handler that fails once per id: every notification completes, in position order, no redrive", async () => {
    const failedOnce = new Set<string>();
    const attempts: Array<{ id: string; attempt: number }> = [];
    const { receiver, sent } = lane("once", async (n, ctx) => {
      attempts.push({ id: n.id, attempt: ctx.attempt });
      if (!failedOnce.has(n.id)) {
        failedOnce.add(n.id);
        throw new Error("transient");
      }
      await write(n, ctx);
    });
    // Accepted at once, though a run holds the subscription (a 409 would be sent again, as a sender does).
    for (const body of sent) await deliverUntilAccepted(receiver, body, 50);
    await eventually(
      async () => (await Promise.all(sent.map((n) => store.get(n.id)))).every((r) => r?.state === "completed"),
      40_000,
      "every notification to complete",
    );
    expect(await effects()).toEqual(sent.map((n) => n.id));
    expect(await staleCount()).toBe(0);
    // Each ran twice: its failure, then its retry (attempt 2), and nothing else ran in between.
    expect(attempts).toEqual(
      sent.flatMap((n) => [
        { id: n.id, attempt: 1 },
        { id: n.id, attempt: 2 },
      ]),
    );
    expect(await jobStates(pool, bossSchema, "once")).toEqual({ completed: COUNT });
    expect(await jobStates(pool, bossSchema, "once_dead_letter")).toEqual({});
  }, 60_000);

  it("a handler that times out once, mid-statement: its retry still runs before the rest, in order, none stale", async () => {
    const attempts: Array<{ id: string; attempt: number }> = [];
    let stalled = false;
    const { receiver, sent } = lane(
      "timeout",
      async (n, ctx) => {
        attempts.push({ id: n.id, attempt: ctx.attempt });
        if (!stalled) {
          stalled = true;
          // Past the 500 ms limit, in a statement of the run's own transaction.
          await ctx.transaction.query("SELECT pg_sleep(5)");
        }
        await write(n, ctx);
      },
      500,
    );
    // Accepted at once, though a run holds the subscription (a 409 would be sent again, as a sender does).
    for (const body of sent) await deliverUntilAccepted(receiver, body, 50);
    await eventually(
      async () => (await Promise.all(sent.map((n) => store.get(n.id)))).every((r) => r?.state === "completed"),
      40_000,
      "every notification to complete",
    );
    const mine = (await effects()).filter((id) => sent.some((n) => n.id === id));
    expect(mine).toEqual(sent.map((n) => n.id));
    expect(await staleCount()).toBe(0);
    expect(attempts[0]).toEqual({ id: sent[0]!.id, attempt: 1 });
    expect(attempts[1]).toEqual({ id: sent[0]!.id, attempt: 2 });
  }, 60_000);

  it("a handler's NonRetriableError and RetryAfterError in a lane: refused is a dead letter at once, the rest in order", async () => {
    const attempts: Array<{ id: string; attempt: number }> = [];
    let members: SubscriptionNotification[] = [];
    const { receiver, sent } = lane("steered", async (n, ctx) => {
      attempts.push({ id: n.id, attempt: ctx.attempt });
      // The first refused for good; the second asks for a retry after 300 ms, once.
      if (n.id === members[0]!.id) throw new NonRetriableError("the subscription was deleted");
      if (n.id === members[1]!.id && ctx.attempt === 1) throw new RetryAfterError("rate limited", 300);
      await write(n, ctx);
    });
    members = sent;
    for (const body of sent) await deliverUntilAccepted(receiver, body, 50);
    await eventually(
      async () => (await Promise.all(sent.slice(1).map((n) => store.get(n.id)))).every((r) => r?.state === "completed"),
      30_000,
      "the rest to complete",
    );
    expect(await store.get(sent[0]!.id)).toMatchObject({ state: "failed" });
    expect(await jobStates(pool, bossSchema, "steered_dead_letter")).toEqual({ created: 1 });
    const mine = (await effects()).filter((id) => sent.some((n) => n.id === id));
    expect(mine).toEqual(sent.slice(1).map((n) => n.id));
    expect(await staleCount()).toBe(0);
    expect(attempts.slice(0, 3)).toEqual([
      { id: sent[0]!.id, attempt: 1 },
      { id: sent[1]!.id, attempt: 1 },
      { id: sent[1]!.id, attempt: 2 },
    ]);
  }, 60_000);

  it("a handler that always fails: every lane member in the dead letters after its attempts; redriven in bulk, all run once, in order, none stale", async () => {
    const broken = { value: true };
    const attempts = new Map<string, number[]>();
    // One worker while they fail: between a last attempt's rollback and its job's failure, a second
    // worker can still take the job for one run more (a known gap, not this test's subject).
    const { receiver, sent, startWorker } = lane(
      "always",
      async (n, ctx) => {
        attempts.set(n.id, [...(attempts.get(n.id) ?? []), ctx.attempt]);
        if (broken.value) throw new Error("downstream down");
        await write(n, ctx);
      },
      undefined,
      1,
    );
    // Accepted at once, though a run holds the subscription (a 409 would be sent again, as a sender does).
    for (const body of sent) await deliverUntilAccepted(receiver, body, 50);
    await eventually(
      async () => (await jobStates(pool, bossSchema, "always_dead_letter")).created === COUNT,
      60_000,
      "every lane member in the dead letters",
    );
    for (const n of sent) {
      expect(attempts.get(n.id)).toEqual([1, 2, 3]);
      expect(await store.get(n.id)).toMatchObject({ state: "failed" });
    }
    expect(await jobStates(pool, bossSchema, "always")).toEqual({ failed: COUNT });

    broken.value = false;
    // The redrive runs on two workers: the order holds across them.
    startWorker();
    const before = (await effects()).length;
    const result = await redrive({ boss: bed.boss, name: "always", schema: bossSchema });
    expect([...result.redriven].sort()).toEqual(sent.map((n) => n.id).sort());
    await eventually(
      async () => (await Promise.all(sent.map((n) => store.get(n.id)))).every((r) => r?.state === "completed"),
      30_000,
      "every redriven notification to complete",
    );
    expect((await effects()).slice(before)).toEqual(sent.map((n) => n.id));
    expect(await staleCount()).toBe(0);
    expect(await jobStates(pool, bossSchema, "always_dead_letter")).toEqual({});
  }, 90_000);
});
