import type PgBoss from "pg-boss";
import type { NotificationQueue, QueuedNotification } from "../queue/queue.js";
import type { QueueJobs } from "../queue/queue-jobs.js";
import { MerchantWebhooksError, optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { withTimeout } from "../shared/time-limit.js";
import { jobDataFor, type NotificationJobData } from "../worker/job-data.js";
import { type EncryptionKey, sealingKey } from "../worker/seal.js";
import {
  DEFAULT_PG_BOSS_SCHEMA,
  executorOn,
  type JobTable,
  jobIdFor,
  jobTable,
  PgBossSetupError,
  type Queryable,
  type SqlExecutor,
} from "./job-table.js";
import { pgBossJobs } from "./queue-jobs.js";

/** The retry and dead-letter options this package sets on every job it sends. */
export interface PgBossJobOptions {
  /** Retries after the first run. Default 7: 8 runs in all, as the BullMQ queue's 8 attempts. */
  retryLimit?: number;
  /** Seconds before the first retry. Default 2. */
  retryDelay?: number;
  /** Double the delay with each retry (with pg-boss's jitter). Default true: about 4 minutes in all. */
  retryBackoff?: boolean;
  /** Job priority, higher first. Default 0. */
  priority?: number;
}

/**
 * As the BullMQ queue's `DEFAULT_JOB_OPTIONS`: 8 runs, 2 s doubling (about 4 minutes) rides out a
 * dependency's restart; what still fails goes to the dead-letter queue for `redrive`.
 */
export const DEFAULT_PG_BOSS_JOB_OPTIONS = {
  retryLimit: 7,
  retryDelay: 2,
  retryBackoff: true,
} as const satisfies PgBossJobOptions;

export interface PgBossQueueOptions {
  /** The merchant's `PgBoss`, started (`await boss.start()`), on the database the `postgresStore` uses. */
  boss: PgBoss;
  /** Queue name; the workers use the same. Created (with its dead-letter queue) if missing. */
  name: string;
  /** pg-boss's schema, as given to `new PgBoss({ schema })`. Default `pgboss`. */
  schema?: string;
  /** Queue that notifications out of attempts go to, for `redrive`. Default `<name>_dead_letter`. */
  deadLetter?: string;
  /** Merged over `DEFAULT_PG_BOSS_JOB_OPTIONS`. */
  jobOptions?: PgBossJobOptions;
  /** Longest an enqueue may take before the receiver answers 503. Default 5 s. */
  timeoutMs?: number;
  /**
   * 32 bytes (or their base64) to seal each job's notification with AES-256-GCM; give the workers the
   * same key. Without it, job data holds the notification with card numbers masked. Either way, card
   * verification data is never written.
   */
  encryptionKey?: EncryptionKey;
}

const PG_BOSS_QUEUE_KEYS = {
  boss: true,
  name: true,
  schema: true,
  deadLetter: true,
  jobOptions: true,
  timeoutMs: true,
  encryptionKey: true,
} as const satisfies KnownKeys<PgBossQueueOptions>;

/** The queue could not take the notification in time, or PostgreSQL refused it: the receiver answers 503. */
export class PgBossQueueUnavailableError extends MerchantWebhooksError {
  override name = "PgBossQueueUnavailableError";
  declare readonly code: "MW_QUEUE_UNAVAILABLE";
  constructor(message: string, options?: { cause?: unknown }) {
    super("MW_QUEUE_UNAVAILABLE", message, { ...options, status: 503 });
  }
}

export interface PgBossNotificationQueue extends NotificationQueue {
  readonly durable: true;
  readonly boss: PgBoss;
  readonly name: string;
  readonly deadLetter: string;
  /** Add the job on pg-boss's own connection (a store that does not claim in a transaction). */
  enqueue(item: QueuedNotification): Promise<void>;
  /** Add the job in the claim's transaction: `postgresStore` commits the claim, the queued mark and the job at once. */
  enqueueInTransaction(item: QueuedNotification, transaction: unknown): Promise<void>;
  has(id: string): Promise<boolean>;
  /** A `SELECT 1` through pg-boss within `timeoutMs`. */
  ping(): Promise<void>;
  /** Create the queue and its dead-letter queue if missing, and check pg-boss's job table. */
  ready(): Promise<void>;
  /** The statements on pg-boss's job table (for the worker and `redrive`). */
  readonly table: JobTable;
  /** pg-boss's job id for a notification id. */
  jobIdFor(id: string): string;
  /** Its jobs and dead letters, for the console (`createAdmin`). */
  readonly jobs: QueueJobs;
  close(): Promise<void>;
}

/** Tries at creating the queues before an enqueue gives up. */
const CREATE_TRIES = 5;

/** States in which a job still runs by itself (waits, waits to retry, or runs). */
const LIVE_STATES = new Set(["created", "retry", "active"]);

/**
 * The receiver's `queue` option on pg-boss: a durable queue in the merchant's PostgreSQL. With
 * `postgresStore`, the job is inserted in the claim's transaction, so the record and the job commit
 * together, and the receiver answers 200 "accepted for processing" only after that commit.
 */
export function pgBossQueue(options: PgBossQueueOptions): PgBossNotificationQueue {
  rejectUnknownKeys("pgBossQueue", options, Object.keys(PG_BOSS_QUEUE_KEYS));
  const boss = checkBoss("pgBossQueue", options?.boss);
  const name = queueName("pgBossQueue", options.name);
  const deadLetter =
    options.deadLetter === undefined ? `${name}_dead_letter` : queueName("pgBossQueue", options.deadLetter);
  const table = jobTable(options.schema ?? DEFAULT_PG_BOSS_SCHEMA);
  const key = options.encryptionKey === undefined ? undefined : sealingKey(options.encryptionKey);
  const timeoutMs = options.timeoutMs ?? 5_000;
  const sendOptions = { ...DEFAULT_PG_BOSS_JOB_OPTIONS, ...options.jobOptions, deadLetter };
  const late = (what: string) => () => new PgBossQueueUnavailableError(`${what} did not finish within ${timeoutMs} ms`);

  let made: Promise<void> | undefined;
  const ready = () =>
    (made ??= (async () => {
      checkStarted("pgBossQueue", boss);
      try {
        await boss.getDb().executeSql(table.columns, []);
      } catch (err) {
        throw new PgBossSetupError(
          `pg-boss's job table ${table.job} cannot be read as pg-boss 10 lays it out (is the schema right, and pg-boss started?): ${(err as Error).message}`,
        );
      }
      // pg-boss 10 creates a queue's table unguarded: two processes creating one queue at once can
      // deadlock each other. The loser looks again after a pause, and finds the queue there.
      for (let tries = 1; ; tries++) {
        try {
          // The dead-letter queue first: a queue names its dead-letter queue by reference.
          if (!(await boss.getQueue(deadLetter))) await boss.createQueue(deadLetter);
          if (!(await boss.getQueue(name)))
            await boss.createQueue(name, { name, ...DEFAULT_PG_BOSS_JOB_OPTIONS, deadLetter });
          return;
        } catch (err) {
          if (tries === CREATE_TRIES) throw err;
          await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200 * tries));
        }
      }
    })().catch((err) => {
      made = undefined;
      throw err;
    }));

  async function add(item: QueuedNotification, db: SqlExecutor | undefined): Promise<void> {
    // Checked on every add, not only the first: a boss stopped since answers with pg-boss's own TypeError.
    checkStarted("pgBossQueue", boss);
    await ready();
    await placeJob({ boss, name, sendOptions }, jobDataFor(item, key), db);
  }

  const unavailable = (err: unknown) =>
    err instanceof PgBossQueueUnavailableError || err instanceof PgBossSetupError
      ? err
      : // The cause's message is logged with it (pino's err serializer): said once, not twice.
        new PgBossQueueUnavailableError("pg-boss refused the job", { cause: err });

  return {
    durable: true,
    boss,
    name,
    deadLetter,
    table,
    jobIdFor: (id) => jobIdFor(name, id),
    jobs: pgBossJobs({
      boss,
      name,
      deadLetter,
      table,
      jobIdFor: (id) => jobIdFor(name, id),
      place: async (data) => {
        await ready();
        return placeJob({ boss, name, sendOptions }, data);
      },
    }),
    ready,
    enqueue: (item) =>
      withTimeout(add(item, undefined), timeoutMs, late("enqueue")).catch((err) => Promise.reject(unavailable(err))),
    enqueueInTransaction: (item, transaction) =>
      withTimeout(add(item, executorOn(transaction as Queryable)), timeoutMs, late("enqueue")).catch((err) =>
        Promise.reject(unavailable(err)),
      ),
    async has(id) {
      checkStarted("pgBossQueue", boss);
      const job = await withTimeout(boss.getJobById(name, jobIdFor(name, id)), timeoutMs, late("a job lookup"));
      return job !== null && LIVE_STATES.has(job.state);
    },
    // Reads the job table, not just the server: a queue whose tables are not there is not up.
    async ping() {
      checkStarted("pgBossQueue", boss);
      await withTimeout(boss.getDb().executeSql(table.columns, []), timeoutMs, late("a ping"));
    },
    // The boss is the merchant's: they stop it, after the receivers and workers that use it.
    async close() {},
  };
}

/** Where `placeJob` puts a job: the queue and the options every job of it is sent with. */
export interface JobPlace {
  boss: PgBoss;
  name: string;
  sendOptions: PgBossJobOptions & { deadLetter: string };
}

/**
 * Put a notification's job in the queue under its own id (on `db`, in its transaction, when given).
 * The id may be taken: a job still to run will run; one left completed, cancelled or failed (a dead
 * letter) would not, yet whoever places it wants it run again (a receiver that has just claimed the
 * id again, a redrive): it is replaced. False when a job still to run was there already.
 */
export async function placeJob(place: JobPlace, data: NotificationJobData, db?: SqlExecutor): Promise<boolean> {
  const { boss, name } = place;
  const id = jobIdFor(name, data.id);
  const on = db ? { db } : {};
  const send = () => boss.send(name, data as object, { ...place.sendOptions, id, ...on });
  if ((await send()) !== null) return true;
  const existing = await boss.getJobById(name, id, { ...on, includeArchive: false });
  if (existing && LIVE_STATES.has(existing.state)) return false;
  if (existing) await boss.deleteJob(name, id, on);
  if ((await send()) === null) throw new PgBossQueueUnavailableError(`pg-boss did not take the job for ${data.id}`);
  return true;
}

export function checkBoss(what: string, boss: unknown): PgBoss {
  const candidate = boss as Partial<PgBoss> | undefined;
  if (typeof candidate?.send !== "function" || typeof candidate.getDb !== "function")
    throw optionError(
      new TypeError(`${what}: boss must be a started PgBoss instance (new PgBoss(url); await boss.start())`),
      "MW_INVALID_OPTION",
      "boss",
    );
  return boss as PgBoss;
}

/**
 * Refuse a boss whose own pool is not open: before `start()` (or after `stop()`) pg-boss's calls
 * answer with an internal TypeError about `rows` rather than an error of their own. A `db` the
 * merchant handed pg-boss is theirs to open, and is not looked at.
 */
export function checkStarted(what: string, boss: PgBoss): void {
  const db = boss.getDb() as { isOurs?: boolean; opened?: boolean };
  if (db.isOurs && !db.opened)
    throw new PgBossSetupError(
      `${what}: pg-boss is not started (or was stopped): call await boss.start() before receivers or workers use it`,
    );
}

export function queueName(what: string, name: unknown): string {
  if (typeof name !== "string" || !/^[\w.-]+$/.test(name))
    throw optionError(
      new TypeError(`${what}: name must be a pg-boss queue name (letters, digits, _ . -); got ${JSON.stringify(name)}`),
      "MW_INVALID_OPTION",
      "name",
    );
  return name;
}
