import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { type createPgBossWorker, pgBossQueue, pgBossRedrive as redrive } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";
import { bedWorker, laneOf } from "./fixtures/lane.js";

describe("a job pg-boss's retention archives while it waits", () => {
  const bed = pgBossBed(
    "pgbkeep",
    (schema) => `CREATE TABLE "${schema}".effects (seq serial PRIMARY KEY, notification_id text NOT NULL)`,
  );
  const { schema, bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });
  const runs: string[] = [];
  const write = async (n: SubscriptionNotification, ctx: HandlerContext) => {
    runs.push(n.id);
    await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
  };
  const effects = async () =>
    (await pool.query(`SELECT notification_id FROM "${schema}".effects ORDER BY seq`)).rows.map(
      (row) => row.notification_id,
    );
  /** What pg-boss's maintenance does to a job past its `keep_until`: moved, still waiting, to the archive. */
  const retentionPasses = async (queue: string) => {
    await pool.query(`UPDATE "${bossSchema}".job SET keep_until = now() - interval '1 second' WHERE name = $1`, [
      queue,
    ]);
    await bed.boss.maintain();
    expect(await jobStates(pool, bossSchema, queue)).toEqual({});
  };
  const archived = async (queue: string) =>
    (await pool.query(`SELECT count(*)::int AS n FROM "${bossSchema}".archive WHERE name = $1`, [queue])).rows[0].n;
  const workerOn = (name: string, extra: Partial<Parameters<typeof createPgBossWorker>[0]> = {}) => {
    const worker = bedWorker(bed, name, { onRenew: write, ...extra });
    cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
    return worker;
  };

  it("a queued notification whose job was archived runs once when a worker comes", async () => {
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue: pgBossQueue({ boss: bed.boss, name: "kept", schema: bossSchema }),
    });
    cleanup.push(() => receiver.close());
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await retentionPasses("kept");
    expect(await archived("kept")).toBe(1);
    expect(await store.get(body.id)).toMatchObject({ state: "queued" });

    workerOn("kept");
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the archived job to run");
    expect(runs.filter((id) => id === body.id)).toHaveLength(1);
    expect(await effects()).toContain(body.id);
    expect(await jobStates(pool, bossSchema, "kept")).toEqual({ completed: 1 });
  });

  it("an ordered subscription's archived jobs run once each, in position order", async () => {
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue: pgBossQueue({ boss: bed.boss, name: "kept-ordered", schema: bossSchema }),
      ordering: true,
    });
    cleanup.push(() => receiver.close());
    const sub = `SUB-${process.pid}-kept`;
    const sent = laneOf(sub, 4, 4);
    for (const body of sent) expect((await receiver.handle(post(body))).status).toBe(200);
    await retentionPasses("kept-ordered");
    const before = (await effects()).length;

    workerOn("kept-ordered");
    await eventually(
      async () => (await Promise.all(sent.map((n) => store.get(n.id)))).every((r) => r?.state === "completed"),
      20_000,
      "every archived job to run",
    );
    expect((await effects()).slice(before)).toEqual(sent.map((n) => n.id));
    expect(await jobStates(pool, bossSchema, "kept-ordered")).toEqual({ completed: 4 });
  });

  it("a dead letter archived while it waits is still found by redrive, and runs once", async () => {
    const queue = pgBossQueue({
      boss: bed.boss,
      name: "kept-dlq",
      schema: bossSchema,
      jobOptions: { retryLimit: 0 },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    cleanup.push(() => receiver.close());
    const broken = { value: true };
    workerOn("kept-dlq", {
      onRenew: async (n, ctx) => {
        if (broken.value) throw new Error("downstream down");
        await write(n, ctx);
      },
    });
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(
      async () => (await jobStates(pool, bossSchema, "kept-dlq_dead_letter")).created === 1,
      15_000,
      "the dead letter",
    );
    await retentionPasses("kept-dlq_dead_letter");
    broken.value = false;
    expect(await redrive({ boss: bed.boss, name: "kept-dlq", schema: bossSchema })).toEqual({
      redriven: [body.id],
      notFailed: [],
    });
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the redriven run");
    expect(runs.filter((id) => id === body.id)).toHaveLength(1);
  });
});
