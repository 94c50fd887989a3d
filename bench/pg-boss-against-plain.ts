import { readFileSync } from "node:fs";
import os from "node:os";
import { createReceiver } from "merchant-webhooks";
import { createPgBossWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { migrate, postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import PgBoss from "pg-boss";
import { pino } from "pino";

/**
 * The pg-boss worker against plain pg-boss, draining the same backlog with the same insert per job,
 * side by side in one run, the median of ROUNDS (default 3) rounds each:
 *   - the library: `createPgBossWorker`, concurrency 20, each notification's claim, its insert through
 *     ctx.transaction, its record's completion and its job's completion committed in one transaction;
 *   - plain `work()`, batches of 20 (the same 20 at a time), each job's insert on its own, the batch
 *     completed by pg-boss after; and plain `work()` in batches of 200, its best here (pg-boss 10 waits
 *     out its polling interval, 0.5 s at least, after every batch, however full).
 * The backlog is queued before each drain and not timed. Goal: library ÷ plain ≥ 0.6.
 * `npx tsx bench/pg-boss-against-plain.ts` after `npm run build` (DATABASE_URL; COUNT, default 2,000).
 */
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const count = Number(process.env.COUNT ?? 2_000);
const rounds = Number(process.env.ROUNDS ?? 3);
const tag = `bench_pgplain_${Date.now().toString(36)}`;
const template = JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8"));
const encoder = new TextEncoder();
const headers = { "content-type": "application/json" };

const pool = new pg.Pool({ connectionString: databaseUrl, max: 40 });
await migrate(pool, { schema: tag });
await pool.query(`CREATE TABLE "${tag}".effects (notification_id text NOT NULL)`);
const bossSchema = `${tag}_boss`;
const boss = new PgBoss({ connectionString: databaseUrl, schema: bossSchema, schedule: false, max: 10 });
boss.on("error", () => {});
await boss.start();
const store = postgresStore({ connection: pool, schema: tag });
const rows = async () => (await pool.query(`SELECT count(*)::int AS n FROM "${tag}".effects`)).rows[0].n as number;
const insertSql = `INSERT INTO "${tag}".effects (notification_id) VALUES ($1)`;
const notifications = (label: string) =>
  Array.from({ length: count }, (_, i) => ({ ...template, id: `${tag}-${label}-${i}` }));

/** Seconds from `start()` until `count` more effect rows are there. */
async function timeDrain(start: () => Promise<() => Promise<unknown>>): Promise<number> {
  const base = await rows();
  const started = performance.now();
  const stop = await start();
  while ((await rows()) - base < count) await new Promise((resolve) => setTimeout(resolve, 10));
  const seconds = (performance.now() - started) / 1000;
  await stop();
  return seconds;
}

async function library(round: number): Promise<number> {
  const name = `library${round}`;
  const queue = pgBossQueue({ boss, name, schema: bossSchema });
  const receiver = createReceiver({ logger: pino({ level: "silent" }), idempotency: store, queue });
  for (const n of notifications(name)) {
    const response = await receiver.handle({ method: "POST", headers, rawBody: encoder.encode(JSON.stringify(n)) });
    if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${response.body}`);
  }
  await receiver.close();
  return timeDrain(async () => {
    const worker = createPgBossWorker({
      boss,
      name,
      schema: bossSchema,
      concurrency: 20,
      idempotency: store,
      logger: pino({ level: "silent" }),
      pollingIntervalMs: 100,
      onRenew: async (n, ctx) => void (await ctx.transaction.query(insertSql, [n.id])),
    });
    await worker.waitUntilReady();
    return () => worker.close({ timeoutMs: 5_000 });
  });
}

async function plain(round: number, batchSize: number): Promise<number> {
  const name = `plain${batchSize}_${round}`;
  await boss.createQueue(name);
  await boss.insert(notifications(name).map((n) => ({ name, data: n })));
  return timeDrain(async () => {
    const id = await boss.work<{ id: string }>(name, { batchSize, pollingIntervalSeconds: 0.5 }, async (jobs) => {
      await Promise.all(jobs.map((job) => pool.query(insertSql, [job.data.id])));
    });
    return () => boss.offWork({ id });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const perSecond = (seconds: number[]) => Math.round(count / median(seconds));
try {
  const times = { library: [] as number[], plain20: [] as number[], plain200: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    times.library.push(await library(round));
    times.plain20.push(await plain(round, 20));
    times.plain200.push(await plain(round, 200));
    console.error(
      `round ${round + 1}: library ${Math.round(count / times.library.at(-1)!)}/s, plain batches of 20 ${Math.round(count / times.plain20.at(-1)!)}/s, of 200 ${Math.round(count / times.plain200.at(-1)!)}/s`,
    );
  }
  const result = {
    count,
    rounds,
    cpus: os.cpus().length,
    node: process.version,
    libraryPerSecond: perSecond(times.library),
    plainBatch20PerSecond: perSecond(times.plain20),
    plainBatch200PerSecond: perSecond(times.plain200),
    ratioToPlain20: Math.round((median(times.plain20) / median(times.library)) * 100) / 100,
    ratioToPlain200: Math.round((median(times.plain200) / median(times.library)) * 100) / 100,
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await boss.stop({ graceful: false });
  await pool.query(`DROP SCHEMA "${tag}" CASCADE; DROP SCHEMA "${bossSchema}" CASCADE`);
  await pool.end();
}
