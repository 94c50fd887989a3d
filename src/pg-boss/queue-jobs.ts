import type PgBoss from "pg-boss";
import {
  aboutJobData,
  type DeadLetter,
  failuresOf,
  type JobAbout,
  type JobView,
  type QueueJobs,
} from "../queue/queue-jobs.js";
import type { NotificationJobData } from "../worker/job-data.js";
import type { JobTable } from "./job-table.js";

/** A job's data as pg-boss keeps it, with the failures it was redriven after (`JobFailure`s). */
type KeptData = NotificationJobData & { redriven?: unknown[] };

interface DeadLetterRow {
  id: string;
  data: KeptData | null;
  created_on?: Date;
}

/** Dead-letter jobs read per page when listing them. */
const PAGE = 500;

/**
 * The console's view of a pg-boss queue: a notification's job by its id (`jobIdFor`), and its dead
 * letters in the dead-letter queue, where pg-boss copies a job that failed for good (under an id of
 * its own: found by the notification id in its data). A redrive keeps the failure it follows in the
 * job's data, which the worker does not read.
 */
export function pgBossJobs(options: {
  boss: PgBoss;
  name: string;
  deadLetter: string;
  table: JobTable;
  jobIdFor(id: string): string;
  /** Put a job in the queue under its notification's id, as the queue's `placeJob` does. */
  place(data: NotificationJobData): Promise<unknown>;
}): QueueJobs {
  const { boss, name, deadLetter, table, jobIdFor, place } = options;
  const db = () => boss.getDb();
  const statements = jobStatements(table.job, table.job.replace(/\.job$/, ".archive"));

  const deadLetters = async (id: string): Promise<DeadLetterRow[]> =>
    (await db().executeSql(statements.deadLettersOf, [deadLetter, id])).rows as DeadLetterRow[];
  const mainJob = (id: string) =>
    boss.getJobById(name, jobIdFor(id), { includeArchive: true }) as Promise<PgBoss.JobWithMetadata<KeptData> | null>;

  // The dead-letter jobs each dead letter listed was read from (a notification's, one or more), for its redrive.
  const rowsOf = new WeakMap<DeadLetter, DeadLetterRow[]>();

  /** The dead letters in the dead-letter queue, oldest first, by notification id (those of `wanted`). */
  async function listDeadLetters(wanted: Set<string> | undefined): Promise<DeadLetter[]> {
    const letters = new Map<string, DeadLetter>();
    let after: [Date | string, string] = ["-infinity", "00000000-0000-0000-0000-000000000000"];
    for (;;) {
      const { rows } = await db().executeSql(table.waiting, [deadLetter, ...after, PAGE]);
      for (const row of rows as DeadLetterRow[]) {
        const id = row.data?.id;
        if (typeof id !== "string" || (wanted && !wanted.has(id))) continue;
        const known = letters.get(id);
        if (known) rowsOf.get(known)!.push(row);
        else {
          const letter: DeadLetter = row.data!.order ? { id, order: row.data!.order } : { id };
          letters.set(id, letter);
          rowsOf.set(letter, [row]);
        }
      }
      if (rows.length < PAGE) break;
      const last = rows[rows.length - 1] as DeadLetterRow;
      after = [last.created_on!, last.id];
    }
    return [...letters.values()];
  }

  return {
    kind: "pg-boss",
    async view(id) {
      const [job, dead] = await Promise.all([mainJob(id), deadLetters(id)]);
      const data = job?.data ?? dead[0]?.data;
      if (!data) return undefined;
      const redriven = failuresOf(data.redriven ?? []);
      const runs = job?.startedOn ? job.retryCount + 1 : 0;
      const view: JobView = {
        // Its copy in the dead-letter queue is what a redrive puts back: a dead letter however the job was archived.
        state: dead.length > 0 ? "failed" : (job?.state ?? "failed"),
        attemptsMade: (redriven.at(-1)?.attempts ?? 0) + runs,
        queuedAt: job ? new Date(job.createdOn).getTime() : 0,
        eventType: data.event_type,
        sealed: data.sealed !== undefined,
        headers: data.headers ?? {},
      };
      if (job?.startedOn) view.processedAt = new Date(job.startedOn).getTime();
      if (job?.completedOn) view.finishedAt = new Date(job.completedOn).getTime();
      if (data.order) view.order = data.order;
      if (data.notification !== undefined) view.notification = data.notification;
      return view;
    },
    async about(ids) {
      const found = new Map<string, JobAbout>();
      if (ids.length === 0) return found;
      const { rows } = await db().executeSql(statements.about, [name, ids.map(jobIdFor)]);
      for (const row of rows as Array<{ data: KeptData | null }>) {
        const about = row.data ? aboutJobData(row.data) : undefined;
        if (about && typeof row.data?.id === "string") found.set(row.data.id, about);
      }
      return found;
    },
    async failures(id) {
      const [job, dead] = await Promise.all([mainJob(id), deadLetters(id)]);
      return failuresOf((job?.data ?? dead[0]?.data)?.redriven ?? []);
    },
    async retryFailed(id, note) {
      const [job, dead] = await Promise.all([mainJob(id), deadLetters(id)]);
      const from = dead[0]?.data ?? (job?.state === "failed" ? job.data : undefined);
      if (!from) return false;
      const data: KeptData = note ? { ...from, redriven: [...(from.redriven ?? []), note] } : from;
      // Back in the queue before out of the dead letters: a crash between the two loses nothing.
      await place(data);
      for (const row of dead) await boss.deleteJob(deadLetter, row.id);
      return true;
    },
    deadLetters: (ids) => listDeadLetters(ids ? new Set(ids) : undefined),
    async redrive(letter) {
      const rows = rowsOf.get(letter) ?? (await deadLetters(letter.id));
      const from = rows[0]?.data;
      if (!from) return "no dead letter of it in the dead-letter queue";
      // Marked redriven, an ordered one waits for the older redriven ones of its subscription (see
      // `redrivenAhead`). The mark is the list of failures a console redrive notes there (kept, or empty).
      const data: KeptData = from.order
        ? { ...from, redriven: Array.isArray(from.redriven) ? from.redriven : [] }
        : from;
      // Back in the queue before out of the dead letters: a crash between the two loses nothing.
      await place(data);
      for (const row of rows) await boss.deleteJob(deadLetter, row.id);
      return undefined;
    },
    async removeFailed(id) {
      const [job, dead] = await Promise.all([mainJob(id), deadLetters(id)]);
      for (const row of dead) await boss.deleteJob(deadLetter, row.id);
      const failed = job?.state === "failed";
      if (failed) await boss.deleteJob(name, jobIdFor(id));
      return dead.length > 0 || failed;
    },
    async failed(start, count) {
      const { rows } = await db().executeSql(statements.deadLetterIds, [deadLetter, start, count]);
      return (rows as Array<{ id: string | null }>).flatMap((row) => (row.id ? [row.id] : []));
    },
    async counts() {
      const [{ rows: queued }, { rows: dead }] = await Promise.all([
        db().executeSql(statements.counts, [name]),
        db().executeSql(statements.waitingCount, [deadLetter]),
      ]);
      const row = queued[0] as { waiting: number; active: number; delayed: number; oldest_ms: number | null };
      return {
        waiting: Number(row.waiting),
        active: Number(row.active),
        delayed: Number(row.delayed),
        failed: Number((dead[0] as { count: number }).count),
        ...(row.oldest_ms === null ? {} : { lagMs: Math.max(0, Date.now() - Number(row.oldest_ms)) }),
      };
    },
  };
}

/** What the console reads of pg-boss's job table that pg-boss's API has no call for. */
function jobStatements(job: string, archive: string) {
  const ready = "state < 'active' AND start_after <= now()";
  return {
    /** A notification's jobs waiting in a dead-letter queue (`$2`: its id, as the job data names it). */
    deadLettersOf: `SELECT id, data FROM ${job} WHERE name = $1 AND state < 'active' AND data->>'id' = $2
      ORDER BY created_on, id`,
    /** The notification ids in a dead-letter queue, newest first, `$3` from the `$2`th. */
    deadLetterIds: `SELECT data->>'id' AS id FROM ${job} WHERE name = $1 AND state < 'active'
      ORDER BY created_on DESC, id DESC OFFSET $2 LIMIT $3`,
    /** The jobs `$2` (their ids) of queue `$1`, archived ones too: a list page's in one statement. */
    about: `SELECT data FROM ${job} WHERE name = $1 AND id = ANY($2::uuid[])
      UNION ALL SELECT data FROM ${archive} WHERE name = $1 AND id = ANY($2::uuid[])`,
    waitingCount: `SELECT count(*)::int AS count FROM ${job} WHERE name = $1 AND state < 'active'`,
    counts: `SELECT count(*) FILTER (WHERE ${ready})::int AS waiting,
        count(*) FILTER (WHERE state = 'active')::int AS active,
        count(*) FILTER (WHERE state < 'active' AND start_after > now())::int AS delayed,
        (extract(epoch from min(created_on) FILTER (WHERE ${ready})) * 1000)::float8 AS oldest_ms
      FROM ${job} WHERE name = $1`,
  };
}
