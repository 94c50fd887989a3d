import type { DeadLetter, DeadLetterJobs } from "./queue-jobs.js";
import { redriveInOrder } from "./redrive-order.js";

export interface RedriveResult {
  /** Notification ids put back to work (or that would be, on a dry run), in the order they went. */
  redriven: string[];
  /** Requested ids that are no dead letter there (never failed, already redriven, or removed). */
  notFailed: string[];
  /**
   * Dead letters left where they are, with why: their data was lost before they could run, or they
   * could not go back (a store's redrive says why). Replay one from a recording (the console), or
   * discard it. Absent when there are none.
   */
  unrunnable?: Array<{ id: string; reason: string }>;
}

export interface RedriveDeadLettersOptions {
  /** Notification ids to put back; default every dead letter. */
  ids?: readonly string[] | undefined;
  /** List what would be put back without moving anything. */
  dryRun?: boolean | undefined;
}

/** Lanes put back at a time: each is a few round trips, kept within a connection's fair share. */
const LANES_AT_ONCE = 32;

/**
 * The redrive of the CLI on every queue and store, and of `redrive` and `pgBossRedrive`: the dead
 * letters asked for (all, or `ids`), put back in `redriveInOrder`'s order through `jobs`, each
 * ordered one after the one before it in its lane (`after`), so none turns stale.
 */
export async function redriveDeadLetters(
  jobs: DeadLetterJobs,
  options: RedriveDeadLettersOptions = {},
): Promise<RedriveResult> {
  const asked = options.ids ? [...new Set(options.ids)] : undefined;
  const letters = await jobs.deadLetters(asked);
  const found = new Set(letters.map((letter) => letter.id));
  const unrunnable: NonNullable<RedriveResult["unrunnable"]> = [];
  const { done, skipped } = await redriveInOrder(
    letters,
    (letter) => letter.order,
    (letter) => letter.id,
    {
      redriveOne: async (letter: DeadLetter, after) => {
        if (letter.unrunnable !== undefined) return letter.unrunnable;
        return options.dryRun ? undefined : jobs.redrive(letter, after);
      },
      ...(jobs.settled && !options.dryRun ? { settled: (letter: DeadLetter) => jobs.settled!(letter) } : {}),
      lanesAtOnce: LANES_AT_ONCE,
    },
  );
  for (const { letter, reason } of skipped) unrunnable.push({ id: letter.id, reason });
  return {
    redriven: done.map((letter) => letter.id),
    notFailed: asked ? asked.filter((id) => !found.has(id)) : [],
    ...(unrunnable.length > 0 ? { unrunnable } : {}),
  };
}
