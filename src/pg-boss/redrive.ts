import type PgBoss from "pg-boss";
import { inRedriveOrder } from "../queue/redrive-order.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { DEFAULT_PG_BOSS_SCHEMA, jobTable } from "./job-table.js";
import { checkBoss, DEFAULT_PG_BOSS_JOB_OPTIONS, type PgBossJobOptions, placeJob, queueName } from "./pg-boss-queue.js";
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

export interface PgBossRedriveResult {
  /** Notification ids put back in the queue (or that would be, on a dry run). */
  redriven: string[];
  /** Requested ids with no job in the dead-letter queue. */
  notFailed: string[];
}

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

const PAGE = 500;

interface DeadLetter {
  id: string;
  data: NotificationJobData | null;
  created_on: Date;
}

/** Dead letters as they are to go back (`inRedriveOrder`): the unordered first, then each lane oldest first. */
function inLaneOrder(letters: DeadLetter[]): DeadLetter[] {
  const { unordered, lanes } = inRedriveOrder(
    letters,
    ({ data }) => data?.order,
    ({ data }) => data!.id,
  );
  return [...unordered, ...lanes.flat()];
}

/**
 * Put dead-lettered notifications back to work after a fix: each job in the dead-letter queue goes
 * back to the queue under its notification's job id, with its attempts afresh, and leaves the
 * dead-letter queue. The notification's record is failed, so a worker claims it again and runs the
 * handler; one completed meanwhile (by a redelivery) is not run twice. Safe to run again after a
 * crash: a job already back in the queue is left as it is. An ordered subscription's dead letters go
 * back oldest first, and run in that order.
 */
const REDRIVE_KEYS: KnownKeys<PgBossRedriveOptions> = {
  boss: true,
  name: true,
  schema: true,
  deadLetter: true,
  jobOptions: true,
  ids: true,
  dryRun: true,
};

export async function redrive(options: PgBossRedriveOptions): Promise<PgBossRedriveResult> {
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
  const wanted = options.ids ? new Set(options.ids) : undefined;
  const letters: DeadLetter[] = [];
  let after: [Date | string, string] = ["-infinity", "00000000-0000-0000-0000-000000000000"];
  for (;;) {
    const { rows } = await boss.getDb().executeSql(table.waiting, [deadLetter, ...after, PAGE]);
    for (const row of rows as DeadLetter[]) {
      const id = row.data?.id;
      if (typeof id === "string" && (!wanted || wanted.has(id))) letters.push(row);
    }
    if (rows.length < PAGE) break;
    const last = rows[rows.length - 1] as DeadLetter;
    after = [last.created_on, last.id];
  }
  const redriven = new Set<string>();
  for (const row of inLaneOrder(letters)) {
    if (!options.dryRun) {
      // Marked redriven, an ordered one waits for the older redriven ones of its subscription. The
      // mark is the list of failures a console redrive notes there (kept as it is, or made empty).
      const notes = (row.data as { redriven?: unknown }).redriven;
      const data = row.data!.order ? { ...row.data!, redriven: Array.isArray(notes) ? notes : [] } : row.data!;
      // Back in the queue before out of the dead letters: a crash between the two loses nothing.
      await placeJob(place, data);
      await boss.deleteJob(deadLetter, row.id);
    }
    redriven.add(row.data!.id);
  }
  return {
    redriven: [...redriven],
    notFailed: options.ids ? options.ids.filter((id) => !redriven.has(id)) : [],
  };
}
