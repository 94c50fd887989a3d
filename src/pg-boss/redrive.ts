import type PgBoss from "pg-boss";
import type { DeadLetterJobs } from "../queue/queue-jobs.js";
import { type RedriveResult, redriveDeadLetters } from "../queue/redrive-dead-letters.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { DEFAULT_PG_BOSS_SCHEMA, jobIdFor, jobTable } from "./job-table.js";
import { checkBoss, DEFAULT_PG_BOSS_JOB_OPTIONS, type PgBossJobOptions, placeJob, queueName } from "./pg-boss-queue.js";
import { pgBossJobs } from "./queue-jobs.js";
import { restoreArchived } from "./restore-archived.js";

export interface PgBossRedriveOptions {
  /** A started `PgBoss` on the queue's database. */
  boss: PgBoss;
  /** Queue name, as given to `pgBossQueue`. */
  name: string;
  /** pg-boss's schema, as given to `new PgBoss({ schema })`. Default `pgboss`. */
  schema?: string;
  /** The dead-letter queue, as given to `pgBossQueue`. Default `<name>_dead_letter`. */
  deadLetter?: string;
  /** As given to `pgBossQueue`: the redriven jobs get the same retries. */
  jobOptions?: PgBossJobOptions;
  /** Notification ids to put back; default every job in the dead-letter queue. */
  ids?: readonly string[];
  /** List what would be put back without changing anything. */
  dryRun?: boolean;
}

/** What `pgBossRedrive` did: as `redrive`'s (merchant-webhooks/bullmq), the one result of every redrive. */
export type PgBossRedriveResult = RedriveResult;

/** The queue asked for is not in pg-boss; `found` lists the queues it has. */
export class PgBossQueueNotFoundError extends MerchantWebhooksError {
  override readonly name = "PgBossQueueNotFoundError";
  declare readonly code: "MW_QUEUE_NOT_FOUND";
  constructor(
    readonly queue: string,
    readonly found: readonly string[],
  ) {
    super("MW_QUEUE_NOT_FOUND", `no pg-boss queue "${queue}"`);
  }
}

const REDRIVE_KEYS: KnownKeys<PgBossRedriveOptions> = {
  boss: true,
  name: true,
  schema: true,
  deadLetter: true,
  jobOptions: true,
  ids: true,
  dryRun: true,
};

/**
 * Put dead-lettered notifications back to work after a fix: each job in the dead-letter queue goes
 * back to the queue under its notification's job id, with its attempts afresh, and leaves the
 * dead-letter queue, an ordered subscription's oldest first (`redriveDeadLetters`), run in that
 * order. The notification's record is failed, so a worker claims it again and runs the handler; one
 * completed meanwhile (by a redelivery) is not run twice. Safe to run again after a crash: a job
 * already back in the queue is left as it is.
 */
export async function redrive(options: PgBossRedriveOptions): Promise<PgBossRedriveResult> {
  return redriveDeadLetters(await pgBossDeadLetters(options), options);
}

/**
 * The dead letters of a pg-boss queue, for a redrive (`pgBossRedrive`, the CLI's `redrive --pg-boss`).
 * Throws a `PgBossQueueNotFoundError` when pg-boss has no such queue; off a dry run, dead letters
 * pg-boss's retention archived are put back in their dead-letter queue first.
 */
export async function pgBossDeadLetters(options: PgBossRedriveOptions): Promise<DeadLetterJobs> {
  rejectUnknownKeys("pgBossRedrive", options, Object.keys(REDRIVE_KEYS));
  const boss = checkBoss("redrive", options?.boss);
  const name = queueName("redrive", options.name);
  const deadLetter =
    options.deadLetter === undefined ? `${name}_dead_letter` : queueName("redrive", options.deadLetter);
  const table = jobTable(options.schema ?? DEFAULT_PG_BOSS_SCHEMA);
  // Looked up, never created: a misspelt name must not look like an empty dead-letter queue.
  if (!(await boss.getQueue(name)))
    throw new PgBossQueueNotFoundError(name, (await boss.getQueues()).map((queue) => queue.name).sort());
  const place = { boss, name, sendOptions: { ...DEFAULT_PG_BOSS_JOB_OPTIONS, ...options.jobOptions, deadLetter } };
  // Dead letters pg-boss's retention archived are dead letters still: back in their queue first.
  if (!options.dryRun) await restoreArchived(boss.getDb(), table, [deadLetter]);
  return pgBossJobs({
    boss,
    name,
    deadLetter,
    table,
    jobIdFor: (id) => jobIdFor(name, id),
    place: (data) => placeJob(place, data),
  });
}
