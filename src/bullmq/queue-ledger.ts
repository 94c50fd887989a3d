import type { Cluster, Redis } from "ioredis";
import { keySlot } from "../redis/key-slot.js";
import { withTimeout } from "../shared/time-limit.js";
import type { NotificationJobData } from "../worker/job-data.js";
import { hashTagOf } from "./cluster-prefix.js";
import { SCRIPTS } from "./lua/scripts.generated.js";

/** A copy of one job's data, as the ledger keeps it until the notification is done. */
export interface LedgerEntry {
  id: string;
  /** Which of the ledger's parts holds it. */
  part: number;
  /** Epoch ms at which it was written. */
  since: number;
  /** Undefined when the copy could not be read back (then the entry is only dropped). */
  data: NotificationJobData | undefined;
}

/**
 * A second copy of every queued job's data, kept apart from the queue, so a job the queue lost (a
 * failover that dropped the master's last writes before its replica had them, a job removed by hand)
 * can be queued again from it (`sweepQueued`) instead of leaving its record `queued` with nothing to
 * run. Receivers write the copy beside the job; workers drop it once the notification is done.
 *
 * On Redis Cluster, a copy on the queue's own master would be lost with the job. The ledger is split
 * into `LEDGER_PARTS` parts, each under its own hash tag; a writer puts the copy into a part that the
 * cluster's slot map places on another master than the queue's (readers look in every part, so a
 * later change of the map loses nothing). On a single Redis every part is on the one server.
 */
export interface QueueLedger {
  /** The part `keep` would write `id` to now; recorded in the job data so the worker drops the right copy. */
  partFor(id: string): number;
  /** `data` as it is, or already serialised. */
  keep(id: string, data: NotificationJobData | string, part: number): Promise<void>;
  /**
   * `keep`, and beside it whether the job `job.id` sits in one of `job.finished` (the queue's failed
   * and completed sets): on a single Redis both in one script, on a cluster (where the copy's part is
   * on another master by design) in two, sent together. Resolves with that answer once both are done.
   */
  keepBesideJob(
    id: string,
    data: NotificationJobData,
    part: number,
    job: { id: string; finished: readonly [string, string] },
  ): Promise<boolean>;
  /** Drop the copy; without `part`, from every part. */
  forget(id: string, part?: number): Promise<void>;
  /** Drop the copies of several notifications, one transaction per part they are in. */
  forgetAll(copies: ReadonlyArray<{ id: string; part: number }>): Promise<void>;
  /** The copy of `id`, looked for in every part. */
  find(id: string): Promise<LedgerEntry | undefined>;
  /** Up to `limit` copies written before `before` (epoch ms), oldest first in each part. */
  due(before: number, limit: number): Promise<LedgerEntry[]>;
  /** One page of one part's copies written before `before`, oldest first, past the first `offset`. */
  duePage(part: number, before: number, offset: number, limit: number): Promise<LedgerEntry[]>;
}

export const LEDGER_PARTS = 4;

type Client = Redis | Cluster;

// The scripts are `lua/ledger-*.lua` and `lua/job-finished-2.lua`; each file says its KEYS and ARGV.
const LEDGER_SCRIPTS = {
  mwLedgerKeep: { lua: SCRIPTS.LEDGER_KEEP, numberOfKeys: 2 },
  mwLedgerDrop: { lua: SCRIPTS.LEDGER_DROP, numberOfKeys: 2 },
  mwJobFinished: { lua: SCRIPTS.JOB_FINISHED, numberOfKeys: 2 },
  mwLedgerKeepJobFinished: { lua: SCRIPTS.LEDGER_KEEP_JOB_FINISHED, numberOfKeys: 4 },
} as const;
type LedgerCommands = {
  [name in keyof typeof LEDGER_SCRIPTS]: (...keysAndArgs: (string | number)[]) => Promise<number>;
};

/**
 * The ledger's scripts on `client` (once per client): a copy and its time go in one command, not a
 * MULTI, whose pipeline object costs more than the write itself on a client holding BullMQ's scripts;
 * so do a batch's drops.
 */
function ledgerCommands(client: Client): LedgerCommands {
  const commands = client as unknown as LedgerCommands;
  for (const [name, script] of Object.entries(LEDGER_SCRIPTS))
    if (typeof (commands as Record<string, unknown>)[name] !== "function") client.defineCommand(name, script);
  return commands;
}

/** Job data as a copy (or a lane) keeps it; undefined when absent or not readable. */
export function parseJobData(text: string | null): NotificationJobData | undefined {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as NotificationJobData;
  } catch {
    return undefined;
  }
}

/**
 * Whether the job `jobId` sits in one of `finished` (the queue's failed and completed sets): one
 * script, where BullMQ's job-state read scans the lane.
 */
export async function jobFinished(
  client: Client,
  jobId: string,
  finished: readonly [string, string],
): Promise<boolean> {
  return (await ledgerCommands(client).mwJobFinished(finished[0], finished[1], jobId)) === 1;
}

const isCluster = (client: Client): client is Cluster => (client as { isCluster?: boolean }).isCluster === true;

export function queueLedger(client: Client, prefix: string | undefined, name: string): QueueLedger {
  const base = `${prefix ?? "bull"}:${name}:`;
  const tag = hashTagOf(base);
  const parts = Array.from({ length: LEDGER_PARTS }, (_, part) => {
    // With a hash tag, each part gets a tag of its own (its own slot); without, a plain name suffices.
    const root = tag === undefined ? `${base}ledger-${part}` : base.replace(`{${tag}}`, `{${tag}:ledger-${part}}`);
    return { jobs: `${root}:jobs`, since: `${root}:since` };
  });
  const queueSlot = keySlot(base);
  const commands = ledgerCommands(client);

  const masterOf = (slot: number): string | undefined =>
    isCluster(client) ? (client.slots[slot]?.[0] as string | undefined) : undefined;

  return {
    partFor(id) {
      const start = spread(id) % LEDGER_PARTS;
      const queueMaster = masterOf(queueSlot);
      if (queueMaster === undefined) return start;
      for (let step = 0; step < LEDGER_PARTS; step++) {
        const part = (start + step) % LEDGER_PARTS;
        const master = masterOf(keySlot(parts[part]!.jobs));
        if (master !== undefined && master !== queueMaster) return part;
      }
      return start;
    },
    async keep(id, data, part) {
      const keys = parts[part]!;
      const text = typeof data === "string" ? data : JSON.stringify(data);
      await commands.mwLedgerKeep(keys.jobs, keys.since, id, text, Date.now());
    },
    async keepBesideJob(id, data, part, job) {
      const keys = parts[part]!;
      const text = JSON.stringify(data);
      const [failed, completed] = job.finished;
      if (!isCluster(client))
        return (
          (await commands.mwLedgerKeepJobFinished(
            keys.jobs,
            keys.since,
            failed,
            completed,
            id,
            text,
            Date.now(),
            job.id,
          )) === 1
        );
      const [, finished] = await Promise.all([
        commands.mwLedgerKeep(keys.jobs, keys.since, id, text, Date.now()),
        commands.mwJobFinished(failed, completed, job.id),
      ]);
      return finished === 1;
    },
    async forget(id, part) {
      const chosen = part === undefined ? parts : [parts[part]!];
      await Promise.all(chosen.map((keys) => commands.mwLedgerDrop(keys.jobs, keys.since, id)));
    },
    async forgetAll(copies) {
      const byPart = new Map<number, string[]>();
      for (const { id, part } of copies) {
        const ids = byPart.get(part);
        if (ids) ids.push(id);
        else byPart.set(part, [id]);
      }
      await Promise.all(
        [...byPart].map(([part, ids]) => commands.mwLedgerDrop(parts[part]!.jobs, parts[part]!.since, ...ids)),
      );
    },
    async find(id) {
      // The part it was most likely kept in first: the one `partFor` picks now (the slot map may have moved).
      const first = this.partFor(id);
      for (let step = 0; step < LEDGER_PARTS; step++) {
        const part = (first + step) % LEDGER_PARTS;
        const keys = parts[part]!;
        const [text, since] = await Promise.all([client.hget(keys.jobs, id), client.zscore(keys.since, id)]);
        if (text !== null) return { id, part, since: Number(since ?? 0), data: parseJobData(text) };
      }
      return undefined;
    },
    async due(before, limit) {
      const entries: LedgerEntry[] = [];
      for (let part = 0; part < LEDGER_PARTS && entries.length < limit; part++)
        entries.push(...(await this.duePage(part, before, 0, limit - entries.length)));
      return entries;
    },
    async duePage(part, before, offset, limit) {
      const keys = parts[part]!;
      const flat = await client.zrangebyscore(keys.since, "-inf", before, "WITHSCORES", "LIMIT", offset, limit);
      const ids = flat.filter((_, i) => i % 2 === 0);
      if (ids.length === 0) return [];
      const texts = await client.hmget(keys.jobs, ...ids);
      return ids.map((id, i) => ({ id, part, since: Number(flat[i * 2 + 1]), data: parseJobData(texts[i] ?? null) }));
    },
  };
}

/** Copies to drop, gathered from many jobs and dropped a batch at a time (`batchedDrops`). */
export interface LedgerDrops {
  drop(id: string, part: number): void;
  /** Drop what is gathered now; resolves when done (or failed: a copy left behind is swept). */
  flush(): Promise<void>;
}

/**
 * A worker's drops of done notifications' copies, one transaction per ledger part for everything
 * gathered over `delayMs` (or `maxBatch` copies), instead of one per notification: a job's own drop
 * then costs no round trip of its own. Losing a batch (a crash, Redis away) only leaves copies the
 * sweep drops, their records completed.
 */
export function batchedDrops(
  ledger: QueueLedger,
  { delayMs = 50, maxBatch = 128, timeoutMs = 5_000 } = {},
): LedgerDrops {
  let batch: Array<{ id: string; part: number }> = [];
  let timer: NodeJS.Timeout | undefined;
  const inFlight = new Set<Promise<void>>();
  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (batch.length > 0) {
      const copies = batch;
      batch = [];
      const sent = withTimeout(ledger.forgetAll(copies), timeoutMs, () => new Error("ledger write timed out"))
        .catch(() => {})
        .finally(() => inFlight.delete(sent));
      inFlight.add(sent);
    }
    return Promise.all(inFlight).then(() => {});
  };
  return {
    drop(id, part) {
      batch.push({ id, part });
      if (batch.length >= maxBatch) void flush();
      else timer ??= setTimeout(flush, delayMs).unref();
    },
    flush,
  };
}

/** A cheap, stable spread of ids over the parts. */
function spread(id: string): number {
  let hash = 0;
  for (let i = 0; i < id.length; i++) hash = (hash * 31 + id.charCodeAt(i)) >>> 0;
  return hash;
}
