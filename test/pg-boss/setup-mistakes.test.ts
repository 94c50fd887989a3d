import { createReceiver, type HandlerContext } from "merchant-webhooks";
import { createPgBossWorker, type PgBossNotificationWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { postgresStore } from "merchant-webhooks/postgres";
import PgBoss from "pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually, sleep } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";

/** What pg-boss throws from inside when used unstarted: it must never reach a merchant's log or answer. */
const INTERNAL = /Cannot destructure|Cannot read properties|TypeError/;

describe("set-up mistakes answer at start, with MW_PGBOSS_SETUP", () => {
  const bed = pgBossBed("pgbsetup", (schema) => `CREATE TABLE "${schema}".effects (notification_id text NOT NULL)`);
  const { schema, bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });
  const unstartedBoss = () => {
    const boss = new PgBoss({ connectionString: DATABASE_URL, schema: bossSchema, schedule: false, max: 4 });
    boss.on("error", () => {});
    cleanup.push(() => boss.stop({ graceful: false }).catch(() => {}));
    return boss;
  };
  const write = async (n: { id: string }, ctx: HandlerContext) => {
    await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
  };
  const effects = async (id: string) =>
    (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0].n;
  const worker = (options: Partial<Parameters<typeof createPgBossWorker>[0]>): PgBossNotificationWorker => {
    const made = createPgBossWorker({
      boss: bed.boss,
      name: "setup",
      schema: bossSchema,
      idempotency: store,
      logger: silentLogger(),
      pollingIntervalMs: 100,
      onRenew: write,
      ...options,
    });
    cleanup.push(() => made.close({ timeoutMs: 1_000 }));
    return made;
  };

  it("a receiver on a boss never started: 503, MW_PGBOSS_SETUP logged once, no pg-boss internals, health not ok", async () => {
    const boss = unstartedBoss();
    const { logger, lines, text } = captureLogger();
    const receiver = createReceiver({
      logger,
      idempotency: store,
      queue: pgBossQueue({ boss, name: "early", schema: bossSchema }),
    });
    cleanup.push(() => receiver.close());
    const body = notification();
    const refused = await receiver.handle(post(body));
    expect(refused.status).toBe(503);
    expect(refused.body).not.toMatch(INTERNAL);
    expect(await store.get(body.id)).toBeUndefined();
    const failed = lines().filter((line) => line.outcome === "unavailable");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.err).toMatchObject({ code: "MW_PGBOSS_SETUP", message: expect.stringContaining("boss.start()") });
    expect(text()).not.toMatch(INTERNAL);
    expect(await receiver.health()).toMatchObject({ ok: false, store: "up", queue: "down" });

    // Started, the same receiver takes the notification.
    await boss.start();
    expect((await receiver.handle(post(body))).status).toBe(200);
    expect(await receiver.health()).toMatchObject({ ok: true, queue: "up" });
  });

  it("a worker on a boss never started: waitUntilReady rejects with the code, health not ok, an error line; started, it runs the job", async () => {
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue: pgBossQueue({ boss: bed.boss, name: "setup", schema: bossSchema }),
    });
    cleanup.push(() => receiver.close());
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);

    const boss = unstartedBoss();
    const { logger, lines, text } = captureLogger();
    const idle = worker({ boss, logger });
    await expect(idle.waitUntilReady()).rejects.toMatchObject({
      code: "MW_PGBOSS_SETUP",
      message: expect.stringContaining("boss.start()"),
    });
    expect(await idle.health()).toMatchObject({ ok: false, store: "up", queue: "down" });
    await eventually(async () => lines().some((line) => line.level === 50), 5_000, "an error line");
    expect(lines().filter((line) => line.level === 50)).toEqual([
      expect.objectContaining({ err: expect.objectContaining({ code: "MW_PGBOSS_SETUP" }) }),
    ]);
    expect(text()).not.toMatch(INTERNAL);
    expect(await store.get(body.id)).toMatchObject({ state: "queued" });

    // No stall: once the boss is started, the worker runs the waiting job without being made again.
    await boss.start();
    await idle.waitUntilReady();
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the job to run");
    expect(await effects(body.id)).toBe(1);
    expect(await idle.health()).toMatchObject({ ok: true, queue: "up" });
  });

  it("a worker whose pg-boss tables are not there (another schema): the code at start, health not ok", async () => {
    const lost = worker({ name: "setup-lost", schema: `${schema}_nothing` });
    await expect(lost.waitUntilReady()).rejects.toMatchObject({ code: "MW_PGBOSS_SETUP" });
    expect(await lost.health()).toMatchObject({ ok: false, queue: "down" });
  });

  it("a worker whose store cannot reach its tables: MW_MISSING_TABLE at start, logged, health not ok, the job kept", async () => {
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue: pgBossQueue({ boss: bed.boss, name: "setup-store", schema: bossSchema }),
    });
    cleanup.push(() => receiver.close());
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);

    const { logger, lines } = captureLogger();
    const misplaced = worker({
      name: "setup-store",
      logger,
      idempotency: postgresStore({ connection: pool, schema: `${schema}_unmigrated` }),
    });
    await expect(misplaced.waitUntilReady()).rejects.toMatchObject({ code: "MW_MISSING_TABLE" });
    expect(await misplaced.health()).toMatchObject({ ok: false, store: "down" });
    await eventually(async () => lines().some((line) => line.level === 50), 5_000, "an error line");
    expect(lines().filter((line) => line.level === 50)).toEqual([
      expect.objectContaining({ err: expect.objectContaining({ code: "MW_MISSING_TABLE" }) }),
    ]);
    await sleep(500);
    // Nothing was taken: the notification waits for a worker that can record it.
    expect(await store.get(body.id)).toMatchObject({ state: "queued" });
    worker({ name: "setup-store" });
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "a sound worker to run it");
    expect(await effects(body.id)).toBe(1);
  });
});
