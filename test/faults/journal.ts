import type { Redis } from "ioredis";

/** What the receiver processes wrote to the journal (see fault-receiver-process.ts): "<pid>:<id>" entries. */
export interface Journal {
  started: string[];
  effects: string[];
  completed: string[];
}

export async function readJournal(redis: Redis, prefix: string): Promise<Journal> {
  const [started, effects, completed] = await Promise.all(
    (["started", "effects", "completed"] as const).map((list) => redis.lrange(`${prefix}${list}`, 0, -1)),
  );
  return { started: started!, effects: effects!, completed: completed! };
}

export interface EffectVerdict {
  /** Notifications whose effect never happened. */
  lost: string[];
  /** Notifications whose effect happened more than once. */
  duplicates: string[];
  /** Duplicates the kill accounts for: the extra effect was made by a killed process that never recorded the completion. */
  explained: string[];
  unexplained: string[];
  /** Handlers a killed process had started and not seen completed: those the kill interrupted (or whose completion it lost). */
  unfinished: string[];
  /** Of those, the ones whose effect had already happened: the only notifications allowed to run twice. */
  unfinishedAfterEffect: Set<string>;
}

function byId(entries: string[]): Map<string, number[]> {
  const pids = new Map<string, number[]>();
  for (const entry of entries) {
    const colon = entry.indexOf(":");
    const id = entry.slice(colon + 1);
    const list = pids.get(id) ?? [];
    list.push(Number(entry.slice(0, colon)));
    pids.set(id, list);
  }
  return pids;
}

/**
 * Judge the effects against the rule of the fault suite: every notification's effect happened, and
 * an effect happened twice only if the first run was in a process killed between the effect and the
 * completion record (its effect is journalled, its completion is not), the one window no idempotency
 * store can close. A process that ran the same notification twice is never explained.
 */
export function judgeEffects(ids: readonly string[], journal: Journal, killedPids: readonly number[]): EffectVerdict {
  const killed = new Set(killedPids);
  const started = byId(journal.started);
  const effects = byId(journal.effects);
  const completedBy = byId(journal.completed);
  const completedByKilled = (id: string, pid: number) => completedBy.get(id)?.includes(pid) ?? false;
  const killedMidway = (id: string, pid: number) => killed.has(pid) && !completedByKilled(id, pid);

  const unfinished = ids.filter((id) => (started.get(id) ?? []).some((pid) => killedMidway(id, pid)));
  const unfinishedAfterEffect = new Set(
    ids.filter((id) => (effects.get(id) ?? []).some((pid) => killedMidway(id, pid))),
  );

  const lost = ids.filter((id) => !effects.has(id));
  const duplicates = ids.filter((id) => (effects.get(id)?.length ?? 0) > 1);
  const explained = duplicates.filter((id) => {
    const pids = effects.get(id)!;
    const oncePerProcess = new Set(pids).size === pids.length;
    const extraByKilled = new Set(pids.filter((pid) => killedMidway(id, pid))).size;
    return oncePerProcess && pids.length - 1 <= extraByKilled;
  });
  const unexplained = duplicates.filter((id) => !explained.includes(id));
  return { lost, duplicates, explained, unexplained, unfinished, unfinishedAfterEffect };
}
