import { createReceiver, NonRetriableError, RetryAfterError } from "merchant-webhooks";
import { createPgBossWorker, pgBossJobIdFor, pgBossQueue, pgBossRedrive } from "merchant-webhooks/pg-boss";
import { afterAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually } from "../support/redis.js";
import { pgBossBed } from "./fixtures/bed.js";
import { jobStates } from "./fixtures/boss.js";

/** pg-boss's own retry delay is a minute: a retry sooner than that can only be the handler's delay. */
const QUEUE_RETRY_DELAY_S = 60;
const RETRY_AFTER_MS = 400;
const CARD = "4111111111111111";

describe("a pg-boss worker's handler steers its retries", () => {
  const bed = pgBossBed("pgbsteer", (schema) => `CREATE TABLE "${schema}".effects (notification_id text NOT NULL)`);
  const { schema, bossSchema, pool, store } = bed;
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  type Run = { id: string; attempt: number; startedAt: number; endedAt: number };
  function setup(name: string, fail: (run: number) => Error | undefined, retryLimit = 2) {
    const queue = pgBossQueue({
      boss: bed.boss,
      name,
      schema: bossSchema,
      jobOptions: { retryLimit, retryDelay: QUEUE_RETRY_DELAY_S, retryBackoff: false },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const runs: Run[] = [];
    const { logger, lines, text } = captureLogger();
    const worker = createPgBossWorker({
      boss: bed.boss,
      name,
      schema: bossSchema,
      idempotency: store,
      logger,
      pollingIntervalMs: 50,
      onRenew: async (n, ctx) => {
        const run: Run = { id: n.id, attempt: ctx.attempt, startedAt: Date.now(), endedAt: 0 };
        runs.push(run);
        await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
        const err = fail(runs.length);
        run.endedAt = Date.now();
        if (err) throw err;
      },
    });
    cleanup.push(
      () => worker.close({ timeoutMs: 1_000 }),
      () => receiver.close(),
    );
    const deadLetters = () => jobStates(pool, bossSchema, `${name}_dead_letter`);
    return { receiver, runs, lines, text, deadLetters };
  }
  const effects = async (id: string) =>
    (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0].n;

  it("NonRetriableError: one run, dead-lettered with retries left; redrive runs it once more", async () => {
    let refuse = true;
    const { receiver, runs, lines, text, deadLetters } = setup("refused", () =>
      refuse ? new NonRetriableError(`subscription of card ${CARD} was deleted`) : undefined,
    );
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await deadLetters()).created === 1, 20_000, "the dead letter");
    expect(runs.map((r) => r.attempt)).toEqual([1]);
    expect(await jobStates(pool, bossSchema, "refused")).toEqual({ failed: 1 });
    expect(await store.get(body.id)).toMatchObject({ state: "failed", error: "handler_refused" });
    expect(await effects(body.id)).toBe(0);
    const failed = await bed.boss.getJobById("refused", pgBossJobIdFor("refused", body.id));
    expect(failed?.output).toMatchObject({ outcome: "handler_refused" });
    expect(JSON.stringify(failed?.output)).not.toContain(CARD);
    const line = lines().find((l) => l.outcome === "handler_refused");
    expect(line).toMatchObject({ level: 50, notification_id: body.id, attempt: 1 });
    expect(line?.msg).toBe("notification refused by its handler (non-retriable); dead-lettered");
    expect(text()).not.toContain(CARD);

    refuse = false;
    expect(await pgBossRedrive({ boss: bed.boss, name: "refused", schema: bossSchema })).toEqual({
      redriven: [body.id],
      notFailed: [],
    });
    await eventually(async () => (await store.get(body.id))?.state === "completed", 20_000, "the redriven run");
    expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
    expect(await effects(body.id)).toBe(1);
    expect(await deadLetters()).toEqual({});
  });

  it("RetryAfterError once: run again after its delay (not pg-boss's), then completed", async () => {
    const { receiver, runs, lines, text } = setup("later", (run) =>
      run === 1 ? new RetryAfterError(`rate limited for card ${CARD}`, RETRY_AFTER_MS) : undefined,
    );
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 20_000, "the second run");
    expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
    // The retry starts no sooner than the delay after the failed run (a loaded machine only makes it later).
    expect(runs[1]!.startedAt - runs[0]!.endedAt).toBeGreaterThanOrEqual(RETRY_AFTER_MS - 20);
    expect(await effects(body.id)).toBe(1);
    expect(await jobStates(pool, bossSchema, "later")).toEqual({ completed: 1 });
    const line = lines().find((l) => l.outcome === "handler_retry_later");
    expect(line).toMatchObject({ level: 40, retry_in_ms: RETRY_AFTER_MS, attempt: 1 });
    expect(line?.msg).toBe("notification failed; its handler asked to be retried later, and is");
    expect(text()).not.toContain(CARD);
  });

  it("RetryAfterError every time: one of the retries each, then dead-lettered", async () => {
    const { receiver, runs, lines, deadLetters } = setup("always-later", () => new RetryAfterError("not yet", 50), 1);
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await deadLetters()).created === 1, 20_000, "the dead letter");
    // The last run's line is written once its dead letter has committed, so it may follow it by a moment.
    await eventually(
      () => lines().filter((l) => l.outcome === "handler_retry_later").length >= 2,
      5_000,
      "the last run's log line",
    );
    expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
    expect(
      lines()
        .filter((l) => l.outcome === "handler_retry_later")
        .map((l) => l.level),
    ).toEqual([40, 50]);
  });

  it("a plain Error keeps pg-boss's retry delay", async () => {
    const { receiver, runs, lines } = setup("plain", () => new Error("down"));
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await jobStates(pool, bossSchema, "plain")).retry === 1, 20_000, "the retry");
    const { rows } = await pool.query(
      `SELECT extract(epoch from start_after - now()) AS wait FROM "${bossSchema}".job WHERE name = 'plain'`,
    );
    expect(Number(rows[0].wait)).toBeGreaterThan(QUEUE_RETRY_DELAY_S / 2);
    expect(runs).toHaveLength(1);
    // The run's line is written once its retry has committed, so it may follow it by a moment.
    await eventually(() => lines().some((l) => l.outcome === "handler_failed"), 5_000, "the run's log line");
    expect(lines().find((l) => l.outcome === "handler_failed")?.msg).toBe(
      "notification failed; pg-boss retries it, then dead-letters it",
    );
  });
});
