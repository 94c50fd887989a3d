import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { createPgBossWorker, type PgBossNotificationWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";

const COUNT = 50;
describe("ordering through pg-boss workers", () => {
  const bed = pgBossBed(
    "pgborder",
    (schema) =>
      `CREATE TABLE "${schema}".effects (seq serial PRIMARY KEY, notification_id text NOT NULL, position text NOT NULL);
       CREATE TABLE "${schema}".stale (notification_id text NOT NULL, position text NOT NULL)`,
    30,
  );
  const { schema, bossSchema, pool, store } = bed;
  const workers: PgBossNotificationWorker[] = [];
  // Every run writes through the transaction its record and job commit in; `running` catches overlap.
  let running = 0;
  let overlapped = false;
  const write = (table: string) => async (n: SubscriptionNotification, ctx: HandlerContext) => {
    running++;
    if (running > 1) overlapped = true;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await ctx.transaction.query(`INSERT INTO "${schema}".${table} (notification_id, position) VALUES ($1, $2)`, [
      n.id,
      n.resource.update_time,
    ]);
    running--;
  };

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close({ timeoutMs: 5_000 })));
  });

  it(`runs ${COUNT} notifications of one subscription in position order, one at a time, none stale`, async () => {
    const queue = pgBossQueue({ boss: bed.boss, name: "ordered", schema: bossSchema });
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue,
      ordering: true,
      onStale: write("stale"),
    });
    const sub = `SUB-${process.pid}-pgboss`;
    const sent = Array.from({ length: COUNT }, (_, i) =>
      buildNotification(
        "SUBSCRIPTION_RENEW",
        {
          resource: {
            id: sub,
            update_time: `2026-03-01T03:${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}Z`,
          },
        },
        { random: true },
      ),
    );
    // Shuffled, all at once: each joins the subscription's waiting list in position order.
    const shuffled = [...sent].sort(() => Math.random() - 0.5);
    await Promise.all(shuffled.map((n) => deliverUntilAccepted(receiver, n, 20)));
    for (let i = 0; i < 2; i++)
      workers.push(
        createPgBossWorker({
          boss: bed.boss,
          name: "ordered",
          schema: bossSchema,
          idempotency: store,
          logger: silentLogger(),
          concurrency: 4,
          pollingIntervalMs: 100,
          onRenew: write("effects"),
          onStale: write("stale"),
        }),
      );
    await eventually(
      async () => (await jobStates(pool, bossSchema, "ordered")).completed === COUNT,
      45_000,
      "every job to complete",
    );
    const effects = (await pool.query(`SELECT notification_id, position FROM "${schema}".effects ORDER BY seq`)).rows;
    expect(effects.map((row) => row.notification_id)).toEqual(sent.map((n) => n.id));
    expect((await pool.query(`SELECT count(*)::int AS n FROM "${schema}".stale`)).rows[0].n).toBe(0);
    expect(overlapped).toBe(false);
    expect(await jobStates(pool, bossSchema, "ordered")).toEqual({ completed: COUNT });
    await receiver.close();
  }, 60_000);
});
