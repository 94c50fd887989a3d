import { createReceiver } from "merchant-webhooks";
import { createPgBossWorker, pgBossJobIdFor, pgBossQueue, pgBossRedrive } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli.js";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";

describe("pg-boss's dead-letter queue and redrive", () => {
  const bed = pgBossBed("pgbdlq", (schema) => `CREATE TABLE "${schema}".effects (notification_id text NOT NULL)`);
  const { schema, bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  /** A receiver and a worker whose handler fails while `broken.value` is true; 2 runs, 1 s apart. */
  function setup(name: string) {
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bossSchema,
      jobOptions: { retryLimit: 1, retryDelay: 1, retryBackoff: false },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const broken = { value: true };
    const runs: Array<{ id: string; attempt: number; ok: boolean }> = [];
    const { logger, lines } = captureLogger();
    const worker = createPgBossWorker({
      boss: bed.boss,
      name,
      schema: bossSchema,
      idempotency: store,
      logger,
      pollingIntervalMs: 100,
      onRenew: async (n, ctx) => {
        runs.push({ id: n.id, attempt: ctx.attempt, ok: !broken.value });
        await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
        if (broken.value) throw new Error(`downstream rejected card 4111111111111111`);
      },
    });
    cleanup.push(
      () => worker.close({ timeoutMs: 1_000 }),
      () => receiver.close(),
    );
    const deadLetters = () => jobStates(pool, bossSchema, `${name}_dead_letter`);
    return { queue, receiver, broken, runs, lines, deadLetters };
  }
  const effects = async (id: string) =>
    (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0].n;

  it("dead-letters a notification out of attempts, then redrives it by the API once fixed: it runs once", async () => {
    const { receiver, broken, runs, lines, deadLetters } = setup("api");
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await deadLetters()).created === 1, 20_000, "the dead letter");
    expect(runs.map((run) => run.attempt)).toEqual([1, 2]);
    expect(await jobStates(pool, bossSchema, "api")).toEqual({ failed: 1 });
    expect(await store.get(body.id)).toMatchObject({ state: "failed" });
    expect(await effects(body.id)).toBe(0);
    // The stored reason is the redacted error: no card number.
    const failed = await bed.boss.getJobById("api", pgBossJobIdFor("api", body.id));
    expect(JSON.stringify(failed?.output)).toContain("downstream rejected card");
    expect(JSON.stringify(failed?.output)).not.toContain("4111111111111111");
    expect(lines().filter((line) => line.outcome === "handler_failed")).toHaveLength(2);

    const dry = await pgBossRedrive({ boss: bed.boss, name: "api", schema: bossSchema, dryRun: true });
    expect(dry).toEqual({ redriven: [body.id], notFailed: [] });
    expect(await deadLetters()).toEqual({ created: 1 });

    broken.value = false;
    expect(
      await pgBossRedrive({ boss: bed.boss, name: "api", schema: bossSchema, ids: [body.id, "WH-never"] }),
    ).toEqual({
      redriven: [body.id],
      notFailed: ["WH-never"],
    });
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the redriven run");
    expect(runs.filter((run) => run.ok)).toHaveLength(1);
    expect(await effects(body.id)).toBe(1);
    expect(await deadLetters()).toEqual({});
    expect(await jobStates(pool, bossSchema, "api")).toEqual({ completed: 1 });
  });

  it("redrives from the CLI: --dry-run lists, changes nothing; then the queue's dead letters run", async () => {
    const { receiver, broken, runs, deadLetters } = setup("cli");
    const bodies = [notification(), notification()];
    for (const body of bodies) expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await deadLetters()).created === 2, 20_000, "two dead letters");

    const base = ["redrive", "--pg-boss", DATABASE_URL, "--schema", bossSchema, "--queue", "cli"];
    const dry = await runCli([...base, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("2 would be redriven from pg-boss queue cli\n");
    for (const body of bodies) expect(dry.stdout).toContain(`would redrive: ${body.id}\n`);
    expect(await deadLetters()).toEqual({ created: 2 });

    const misspelt = await runCli(["redrive", "--pg-boss", DATABASE_URL, "--schema", bossSchema, "--queue", "clj"]);
    expect(misspelt.code).toBe(1);
    // The server and database as DATABASE_URL names them, whatever the database is called.
    const server = new URL(DATABASE_URL);
    const where = `${server.hostname}${server.port ? `:${server.port}` : ""}${server.pathname}`;
    expect(misspelt.stderr).toContain(`no pg-boss queue clj on PostgreSQL at ${where}. Queues found:\n`);
    expect(misspelt.stderr).toContain("\n  cli\n");

    broken.value = false;
    const run = await runCli(base);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("2 redriven from pg-boss queue cli\n");
    await eventually(
      async () => (await Promise.all(bodies.map((b) => store.get(b.id)))).every((r) => r?.state === "completed"),
      15_000,
      "both redriven notifications to complete",
    );
    for (const body of bodies) expect(await effects(body.id)).toBe(1);
    expect(runs.filter((r) => r.ok)).toHaveLength(2);
    expect(await deadLetters()).toEqual({});
  });

  it("runs a dead-lettered notification again when the platform delivers it again", async () => {
    const { receiver, broken, deadLetters } = setup("again");
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await deadLetters()).created === 1, 20_000, "the dead letter");
    broken.value = false;
    // The failed record is taken over, and the failed job replaced by one that runs.
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 15_000, "the redelivered run");
    expect(await effects(body.id)).toBe(1);
    // A later redrive finds its dead letter already back in the queue: nothing runs twice.
    expect(await pgBossRedrive({ boss: bed.boss, name: "again", schema: bossSchema })).toEqual({
      redriven: [body.id],
      notFailed: [],
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await effects(body.id)).toBe(1);
  });

  it("dead-letters a job whose data is not a notification at once, without running a handler", async () => {
    const { queue, runs, deadLetters } = setup("invalid");
    await queue.ready();
    await bed.boss.send("invalid", { id: "WH-bad", fingerprint: "f", notification: { id: 42 } }, { retryLimit: 5 });
    await eventually(async () => (await deadLetters()).created === 1, 15_000, "the dead letter");
    expect(runs).toEqual([]);
    expect(await jobStates(pool, bossSchema, "invalid")).toEqual({ failed: 1 });
  });
});
