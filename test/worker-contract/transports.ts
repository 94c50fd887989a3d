// The transports the worker contract holds on, each described by how a merchant sets it up: a
// receiver handing notifications to a durable queue, workers taking them off it, the store both claim
// in, and the console's admin API over the store and the queue. Only the package's public entry
// points are used, so the contract keeps holding whatever the workers are made of inside.
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import knexFactory from "knex";
import { type Closable, createReceiver, type IdempotencyStore, type Receiver } from "merchant-webhooks";
import { bullmqQueue, type CreateWorkerOptions, createWorker, jobIdFor, redrive } from "merchant-webhooks/bullmq";
import { type Admin, createAdmin } from "merchant-webhooks/console";
import { createPgBossWorker, pgBossJobIdFor, pgBossQueue, pgBossRedrive } from "merchant-webhooks/pg-boss";
import { postgresStore } from "merchant-webhooks/postgres";
import { knexTransactions } from "merchant-webhooks/postgres/knex";
import { redisStore } from "merchant-webhooks/redis";
import type PgBoss from "pg-boss";
import { afterAll, beforeAll } from "vitest";
import { spawnWorker, type WorkerProcess } from "../bullmq/fixtures/spawn-worker.js";
import { startBoss } from "../pg-boss/fixtures/boss.js";
import { silentLogger } from "../support/capture-logger.js";
import { deliveredStatus } from "../support/notifications.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const workerScript = fileURLToPath(new URL("./worker-process.ts", import.meta.url));

export type TransportKind = "bullmq-redis" | "pgboss-postgres" | "bullmq-postgres" | "bullmq-postgres-knex";

/** A transport of the contract: its queue, and the store its receivers and workers claim in. */
export interface Transport {
  readonly kind: TransportKind;
  /** How a test names it: "BullMQ on redisStore". */
  readonly name: string;
}

export const TRANSPORTS: readonly Transport[] = [
  { kind: "bullmq-redis", name: "BullMQ on redisStore" },
  { kind: "pgboss-postgres", name: "pg-boss on postgresStore" },
  { kind: "bullmq-postgres", name: "BullMQ on postgresStore" },
  // The handler's transaction opened by the merchant's ORM (postgresStore({ orm })), for receivers and workers alike.
  { kind: "bullmq-postgres-knex", name: "BullMQ on postgresStore through Knex" },
];

/** The worker options the contract sets, the same keys on `createWorker` and `createPgBossWorker`. */
export type ContractWorkerOptions = Pick<
  CreateWorkerOptions,
  "onRenew" | "onStale" | "leaseMs" | "handlerTimeoutMs" | "concurrency" | "logger" | "platform"
>;

export interface LineOptions {
  ordering?: boolean;
  /** Runs a job gets before it is a dead letter. Default 3. */
  attempts?: number;
  /** The queue's fixed delay before a retry. Default 50 ms on BullMQ, 1 s on pg-boss (it counts whole seconds). */
  retryDelayMs?: number;
}

/** A receiver on a queue of its own, and the admin API over that queue and the store. */
export interface Line {
  readonly queueName: string;
  readonly receiver: Receiver;
  readonly admin: Admin;
  /** One delivery of `body`, as the platform sends it: the HTTP status it is answered with. */
  deliver(body: object): Promise<number>;
  /** Whether every one of `ids` is completed, as the console finds it (an ordered record by its id alone too). */
  completed(ids: readonly string[]): Promise<boolean>;
  /** The dead letters the console lists, of one subscription when given (a file's tests share a store). */
  deadLetters(subscriptionId?: string): Promise<string[]>;
  /** The ids the queue's own redrive (`redrive`, `pgBossRedrive`: what the CLI runs) would put back. */
  offeredForRedrive(): Promise<string[]>;
  /** The CLI's `redrive` options that name this line's queue (`--queue` on Redis, `--pg-boss`). */
  readonly redriveArgs: readonly string[];
  /**
   * Rewrite the job data of notification `id`'s job where the queue keeps it (Redis hash, pg-boss's
   * job table), as whoever can write there could: `edit` gets the data and answers the new data.
   */
  editJobData(id: string, edit: (data: Record<string, any>) => unknown): Promise<void>;
}

/** What one test file shares on one transport, set up before its tests and taken down after. */
export interface Bed {
  readonly transport: Transport;
  /** The store the receivers, the workers and the admin API claim in (once `beforeAll` ran). */
  readonly store: IdempotencyStore;
  line(name: string, options?: LineOptions): Line;
  /** A worker in this process on queue `name`. */
  worker(name: string, options: ContractWorkerOptions): Closable;
  /**
   * A worker in a child process on queue `name` (worker-process.ts; `env` as it documents). Its
   * handler's starts, effects and aborted runs are rows of this bed's tables: see `rows`.
   */
  spawn(name: string, env?: Record<string, string>): Promise<WorkerProcess>;
  /** Rows per notification id of `started`, `effects` or `aborted`, written by child workers. */
  rows(table: "started" | "effects" | "aborted", id: string): Promise<number>;
  /** The `ctx.attempt` each of those rows was written with, oldest first. */
  attempts(table: "started" | "effects" | "aborted", id: string): Promise<number[]>;
  /**
   * Remove every job and queue-kept copy of the notification `id` on queue `name`, as a person (or a
   * lost queue) would: what the store's lane keeps of it stays.
   */
  removeJobs(name: string, id: string): Promise<void>;
}

/** BullMQ's default retry delay here, and how often its workers look for jobs whose worker stopped. */
const BULLMQ_RETRY_MS = 50;
const STALLED_INTERVAL_MS = 500;

/** Set up a test file's `transport`: its Redis prefix, PostgreSQL schema and pg-boss schema its own. */
export function transportBed(transport: Transport, label: string): Bed {
  const prefix = uniquePrefix(`wc-${label}`);
  const schema = uniqueSchema(`wc_${label}`);
  const bossSchema = `${schema}_boss`;
  const pool = testPool(20);
  const redis = new Redis(REDIS_URL);
  const closers: Array<() => Promise<unknown>> = [];
  const children: WorkerProcess[] = [];
  const onPostgres = transport.kind !== "bullmq-redis";
  const knex =
    transport.kind === "bullmq-postgres-knex"
      ? knexFactory({ client: "pg", connection: DATABASE_URL, pool: { min: 0, max: 10 } })
      : undefined;
  const store: IdempotencyStore = onPostgres
    ? postgresStore({ connection: pool, schema, ...(knex ? { orm: knexTransactions(knex) } : {}) })
    : redisStore({ connection: REDIS_URL, prefix: `${prefix}store:` });
  let boss: PgBoss | undefined;

  beforeAll(async () => {
    await freshSchema(
      pool,
      schema,
      ["started", "effects", "aborted"]
        .map(
          (table) =>
            `CREATE TABLE "${schema}".${table} (notification_id text NOT NULL, pid int NOT NULL, attempt int, at timestamptz NOT NULL DEFAULT clock_timestamp());`,
        )
        .join("\n"),
    );
    if (transport.kind === "pgboss-postgres") boss = await startBoss(bossSchema);
  });
  afterAll(async () => {
    for (const child of children) {
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
    await Promise.all(children.map((child) => child.exited));
    for (const close of closers.reverse()) await close();
    if (!onPostgres) await store.close?.();
    await knex?.destroy();
    await boss?.stop({ graceful: false });
    await removeKeys(redis, prefix);
    redis.disconnect();
    await dropSchema(pool, bossSchema);
    await dropSchema(pool, schema);
    await pool.end();
  });

  function queueFor(name: string, { attempts = 3, retryDelayMs }: LineOptions) {
    if (transport.kind === "pgboss-postgres")
      return pgBossQueue({
        boss: boss!,
        name,
        schema: bossSchema,
        jobOptions: {
          retryLimit: attempts - 1,
          retryDelay: Math.max(1, Math.ceil((retryDelayMs ?? 0) / 1_000)),
          retryBackoff: false,
        },
      });
    return bullmqQueue({
      connection: REDIS_URL,
      name,
      prefix,
      jobOptions: { attempts, backoff: { type: "fixed", delay: retryDelayMs ?? BULLMQ_RETRY_MS } },
    });
  }

  return {
    transport,
    store,
    line(name, options = {}) {
      const queue = queueFor(name, options);
      const ordering = options.ordering ?? false;
      const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering });
      closers.push(
        () => queue.close(),
        () => receiver.close(),
      );
      const admin = createAdmin({ idempotency: store, queue });
      const deliver = (body: object) => deliveredStatus(receiver, body);
      const offeredForRedrive = async () =>
        (transport.kind === "pgboss-postgres"
          ? await pgBossRedrive({ boss: boss!, name, schema: bossSchema, dryRun: true })
          : await redrive({ connection: REDIS_URL, name, prefix, dryRun: true })
        ).redriven;
      const completed = async (ids: readonly string[]) =>
        (await Promise.all(ids.map((id) => admin.getNotification(id)))).every(
          (found) => found?.record?.state === "completed",
        );
      const deadLetters = async (subscriptionId?: string) =>
        (await admin.listNotifications({ state: "failed", ...(subscriptionId ? { subscriptionId } : {}) })).items.map(
          (item) => item.id,
        );
      const editJobData = async (id: string, edit: (data: Record<string, any>) => unknown) => {
        if (transport.kind === "pgboss-postgres") {
          const where = `WHERE name = $1 AND id = $2`;
          const jobId = pgBossJobIdFor(name, id);
          const { rows } = await pool.query(`SELECT data FROM "${bossSchema}".job ${where}`, [name, jobId]);
          if (rows.length !== 1) throw new Error(`no pg-boss job for ${id}`);
          await pool.query(`UPDATE "${bossSchema}".job SET data = $3 ${where}`, [
            name,
            jobId,
            JSON.stringify(edit(rows[0].data)),
          ]);
          return;
        }
        const key = `${prefix}:${name}:${jobIdFor(id)}`;
        const data = await redis.hget(key, "data");
        if (data === null) throw new Error(`no BullMQ job for ${id}`);
        await redis.hset(key, "data", JSON.stringify(edit(JSON.parse(data))));
      };
      const redriveArgs =
        transport.kind === "pgboss-postgres"
          ? ["--pg-boss", DATABASE_URL, "--schema", bossSchema, "--queue", name]
          : ["--queue", name, "--redis", REDIS_URL, "--prefix", prefix];
      return {
        queueName: name,
        receiver,
        admin,
        deliver,
        completed,
        deadLetters,
        offeredForRedrive,
        redriveArgs,
        editJobData,
      };
    },
    worker(name, options) {
      const worker =
        transport.kind === "pgboss-postgres"
          ? createPgBossWorker({
              boss: boss!,
              name,
              schema: bossSchema,
              idempotency: store,
              logger: silentLogger(),
              pollingIntervalMs: 100,
              ...options,
            })
          : createWorker({
              connection: REDIS_URL,
              name,
              prefix,
              idempotency: store,
              logger: silentLogger(),
              stalledInterval: STALLED_INTERVAL_MS,
              ...options,
            });
      closers.push(() => worker.close({ timeoutMs: 1_000 }));
      return worker;
    },
    async spawn(name, env = {}) {
      const child = await spawnWorker(
        {
          TRANSPORT: transport.kind,
          QUEUE: name,
          REDIS_URL,
          PREFIX: prefix,
          STORE_PREFIX: `${prefix}store:`,
          DATABASE_URL,
          SCHEMA: schema,
          BOSS_SCHEMA: bossSchema,
          STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS),
          ...env,
        },
        { script: workerScript },
      );
      children.push(child);
      return child;
    },
    async removeJobs(name, id) {
      if (transport.kind === "pgboss-postgres") {
        await pool.query(`DELETE FROM "${bossSchema}".job WHERE name = $1 AND data->>'id' = $2`, [name, id]);
        return;
      }
      const queue = new Queue(name, { connection: redis.duplicate(), prefix });
      await queue.remove(jobIdFor(id));
      await queue.close();
      // The queue's ledger keeps a copy of each notification's job data, in parts: `prefix:name:ledger-N:jobs`.
      for (const key of await redis.keys(`${prefix}:${name}:ledger-*`))
        await ((await redis.type(key)) === "hash" ? redis.hdel(key, id) : redis.zrem(key, id));
    },
    async rows(table, id) {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM "${schema}".${table} WHERE notification_id = $1`,
        [id],
      );
      return rows[0].n as number;
    },
    async attempts(table, id) {
      const { rows } = await pool.query(
        `SELECT attempt FROM "${schema}".${table} WHERE notification_id = $1 ORDER BY at`,
        [id],
      );
      return rows.map((row) => row.attempt as number);
    },
  };
}
