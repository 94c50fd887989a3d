import { readFileSync } from "node:fs";
import os from "node:os";
import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, type NotificationQueue } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { createPgBossWorker, pgBossQueue } from "merchant-webhooks/pg-boss";
import { migrate, postgresStore } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import pg from "pg";
import PgBoss from "pg-boss";
import { pino } from "pino";

/**
 * The durable queues side by side, in one run on one machine: acknowledgements per second (a receiver,
 * 32 requests in flight, each claimed, queued and answered 200) and drain per second (one worker,
 * concurrency 20, running the backlog those left, each handler writing one small row) for
 *   - BullMQ on redisStore (the Redis stack; the handler INCRs a counter),
 *   - BullMQ on postgresStore (the handler inserts through ctx.transaction),
 *   - pg-boss on postgresStore (the same insert; record, row and job commit together).
 * `npx tsx bench/pg-boss-queue.ts` (REDIS_URL, DATABASE_URL; COUNT, default 2,000).
 */
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const count = Number(process.env.COUNT ?? 2_000);
const silent = () => pino({ level: "silent" });
const tag = `bench_pgboss_${Date.now().toString(36)}`;
const template = JSON.stringify(
  JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8")),
);
const encoder = new TextEncoder();
const headers = { "content-type": "application/json" };
const bodies = (label: string) =>
  Array.from({ length: count }, (_, i) =>
    encoder.encode(template.replace(/"id":\s*"[^"]*"/, `"id":"${tag}-${label}-${i}"`)),
  );

interface Setup {
  label: string;
  store: IdempotencyStore;
  queue: NotificationQueue;
  /** Start one worker; resolves to its close. */
  startWorker(): Promise<() => Promise<unknown>>;
  done(): Promise<number>;
}

async function acknowledge(setup: Setup, list: Uint8Array[]): Promise<number> {
  const receiver = createReceiver({ logger: silent(), idempotency: setup.store, queue: setup.queue });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < list.length) {
        const response = await receiver.handle({ method: "POST", headers, rawBody: list[next++]! });
        if (response.status !== 200) throw new Error(`${setup.label}: unexpected ${response.status}: ${response.body}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await receiver.close();
  return list.length / seconds;
}

async function drain(setup: Setup): Promise<number> {
  const started = performance.now();
  const close = await setup.startWorker();
  while ((await setup.done()) < count) await new Promise((resolve) => setTimeout(resolve, 20));
  const seconds = (performance.now() - started) / 1000;
  await close();
  return count / seconds;
}

const redis = new Redis(redisUrl);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 40 });
const schema = tag;
await migrate(pool, { schema });
await pool.query(`CREATE TABLE "${schema}".effects (notification_id text NOT NULL)`);
const boss = new PgBoss({ connectionString: databaseUrl, schema: `${schema}_boss`, schedule: false, max: 10 });
boss.on("error", () => {});
await boss.start();
const pgStore = postgresStore({ connection: pool, schema });
const rows = async () => (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".effects`)).rows[0].n as number;
let pgBase = 0;
const insert = async (n: { id: string }, ctx: { transaction: pg.PoolClient }) => {
  await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
};

const setups: Setup[] = [
  {
    label: "BullMQ, redisStore",
    store: redisStore({ connection: redisUrl, prefix: `${tag}-store:` }),
    queue: bullmqQueue({ connection: redisUrl, name: "redis", prefix: tag }),
    async startWorker() {
      const worker = createWorker({
        connection: redisUrl,
        name: "redis",
        prefix: tag,
        concurrency: 20,
        idempotency: redisStore({ connection: redisUrl, prefix: `${tag}-store:` }),
        logger: silent(),
        onRenew: async () => void (await redis.incr(`${tag}-done`)),
      });
      await worker.waitUntilReady();
      return () => worker.close({ timeoutMs: 5_000 });
    },
    done: async () => Number(await redis.get(`${tag}-done`)),
  },
  {
    label: "BullMQ, postgresStore",
    store: pgStore,
    queue: bullmqQueue({ connection: redisUrl, name: "postgres", prefix: tag }),
    async startWorker() {
      pgBase = await rows();
      const worker = createWorker({
        connection: redisUrl,
        name: "postgres",
        prefix: tag,
        concurrency: 20,
        idempotency: pgStore,
        logger: silent(),
        onRenew: insert,
      });
      await worker.waitUntilReady();
      return () => worker.close({ timeoutMs: 5_000 });
    },
    done: async () => (await rows()) - pgBase,
  },
  {
    label: "pg-boss, postgresStore",
    store: pgStore,
    queue: pgBossQueue({ boss, name: "bench", schema: `${schema}_boss` }),
    async startWorker() {
      pgBase = await rows();
      const worker = createPgBossWorker({
        boss,
        name: "bench",
        schema: `${schema}_boss`,
        concurrency: 20,
        idempotency: pgStore,
        logger: silent(),
        pollingIntervalMs: 100,
        onRenew: insert,
      });
      await worker.waitUntilReady();
      return () => worker.close({ timeoutMs: 5_000 });
    },
    done: async () => (await rows()) - pgBase,
  },
];

const results: Array<{ queue: string; acksPerSecond: number; drainPerSecond: number }> = [];
try {
  for (const setup of setups) {
    const acks = await acknowledge(setup, bodies(setup.label.replace(/\W+/g, "")));
    const drained = await drain(setup);
    results.push({ queue: setup.label, acksPerSecond: Math.round(acks), drainPerSecond: Math.round(drained) });
    console.error(`${setup.label}: ${Math.round(acks)} acks/s, ${Math.round(drained)} drained/s`);
  }
  console.log(JSON.stringify({ count, cpus: os.cpus().length, node: process.version, results }, null, 2));
} finally {
  for (const setup of setups) await setup.queue.close?.();
  await boss.stop({ graceful: false });
  await pool.query(`DROP SCHEMA "${schema}" CASCADE; DROP SCHEMA "${schema}_boss" CASCADE`);
  await pool.end();
  const keys = await redis.keys(`${tag}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}
