import type PgBoss from "pg-boss";
import { DEFAULT_PG_BOSS_SCHEMA, jobTable } from "./job-table.js";
import { checkBoss, checkStarted, queueName } from "./pg-boss-queue.js";

export interface PgBossDiscardOptions {
  /** A started `PgBoss` on the queue's database. */
  boss: PgBoss;
  /** Queue name, as given to `pgBossQueue`. */
  name: string;
  /** pg-boss's schema, as given to `new PgBoss({ schema })`. Default `pgboss`. */
  schema?: string;
  /** The dead-letter queue, as given to `pgBossQueue`. Default `<name>_dead_letter`. */
  deadLetter?: string;
  /** Notification ids whose dead letters to remove. */
  ids: readonly string[];
}

export interface PgBossDiscardResult {
  /** Notification ids whose dead letters were removed. */
  discarded: string[];
  /** Requested ids with no dead letter. */
  notFound: string[];
}

/**
 * Remove the dead letters of notifications a person discarded, so `redrive` (the API and the CLI's
 * `redrive --pg-boss`) never offers them again: every job of theirs waiting in the dead-letter queue,
 * and any pg-boss's retention archived. The record itself is the caller's to settle (the console's
 * discard completes it with the reason) before this runs.
 */
export async function discardDeadLetters(options: PgBossDiscardOptions): Promise<PgBossDiscardResult> {
  const boss = checkBoss("discardDeadLetters", options?.boss);
  checkStarted("discardDeadLetters", boss);
  const name = queueName("discardDeadLetters", options.name);
  const deadLetter =
    options.deadLetter === undefined ? `${name}_dead_letter` : queueName("discardDeadLetters", options.deadLetter);
  const ids = [...new Set(options.ids)];
  if (ids.length === 0) return { discarded: [], notFound: [] };
  const table = jobTable(options.schema ?? DEFAULT_PG_BOSS_SCHEMA);
  const { rows } = await boss.getDb().executeSql(table.discard, [deadLetter, ids]);
  const gone = new Set((rows as Array<{ id: string }>).map((row) => row.id));
  return { discarded: ids.filter((id) => gone.has(id)), notFound: ids.filter((id) => !gone.has(id)) };
}
