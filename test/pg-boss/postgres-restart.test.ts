import { createReceiver, type Receiver } from "merchant-webhooks";
import { createPgBossWorker, type PgBossNotificationWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { migrate, postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import type PgBoss from "pg-boss";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { jobStates, startBoss } from "./fixtures/boss.js";
import { type PrivatePostgres, startPrivatePostgres } from "./fixtures/private-postgres.js";

const COUNT = 200;

describe("PostgreSQL restarted under a pg-boss receiver and two workers", () => {
  let server: PrivatePostgres;
  let pool: pg.Pool;
  let boss: PgBoss;
  let receiver: Receiver;
  const workers: PgBossNotificationWorker[] = [];

  beforeAll(async () => {
    server = await startPrivatePostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 30 });
    pool.on("error", () => {}); // idle clients cut by the restart
    await migrate(pool);
    await pool.query("CREATE TABLE effects (notification_id text NOT NULL)"); // no unique constraint
    boss = await startBoss("pgboss", { connectionString: server.url });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close({ timeoutMs: 5_000 })));
    await receiver?.close();
    await boss?.stop({ graceful: false });
    await pool?.end();
    await server?.stop();
  });

  it(`loses none of ${COUNT} notifications and runs none twice`, async () => {
    const store = postgresStore({ connection: pool, timeoutMs: 2_000 });
    const queue = pgBossQueue({ boss, name: "restart" });
    receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    for (let i = 0; i < 2; i++)
      workers.push(
        createPgBossWorker({
          boss,
          name: "restart",
          idempotency: store,
          logger: silentLogger(),
          concurrency: 8,
          pollingIntervalMs: 200,
          onRenew: async (n, ctx) => {
            await new Promise((resolve) => setTimeout(resolve, 20));
            await ctx.transaction.query("INSERT INTO effects (notification_id) VALUES ($1)", [n.id]);
          },
        }),
      );
    const sent = Array.from({ length: COUNT }, () => notification());
    // The platform keeps what was not acknowledged and sends it again until it is.
    const statuses = new Map<number, number>();
    const deliver = async (body: Record<string, unknown>) => {
      for (;;) {
        const { status } = await receiver.handle(post(body));
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 200) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const count = async (sql: string) => {
      try {
        return (await pool.query(sql)).rows[0].n as number;
      } catch {
        return -1; // the server is restarting
      }
    };
    const sending = (async () => {
      for (let i = 0; i < sent.length; i += 10) await Promise.all(sent.slice(i, i + 10).map(deliver));
    })();
    await eventually(
      async () => (await count("SELECT count(*)::int AS n FROM effects")) >= 40,
      30_000,
      "40 effects before the restart",
    );
    await server.restart(1_000);
    await sending;
    await eventually(
      async () =>
        (await count("SELECT count(*)::int AS n FROM merchant_webhooks_inbox WHERE state = 'completed'")) === COUNT,
      60_000,
      `all ${COUNT} records to complete after the restart`,
    );
    const perId = (await pool.query("SELECT notification_id, count(*)::int AS n FROM effects GROUP BY 1")).rows;
    expect(perId).toHaveLength(COUNT);
    expect(perId.filter((row) => row.n !== 1)).toEqual([]);
    expect(new Set(perId.map((row) => row.notification_id))).toEqual(new Set(sent.map((n) => n.id)));
    expect(await jobStates(pool, "pgboss", "restart")).toEqual({ completed: COUNT });
    // The restart was felt: some deliveries were refused (and sent again), none answered wrongly.
    expect([...statuses.keys()].every((status) => status === 200 || status === 409 || status === 503)).toBe(true);
    console.log(`pg-boss PostgreSQL restart: answers ${JSON.stringify(Object.fromEntries(statuses))}`);
  }, 120_000);
});
