import { buildNotification } from "merchant-webhooks/testing";
import { sleep } from "../support/redis.js";
import type { FaultRig } from "./fault-rig.js";
import { type FaultTiming, type InjectedFaults, injectFaults } from "./inject-faults.js";
import { type EffectVerdict, judgeEffects, readJournal } from "./journal.js";
import { type SenderReport, startSender } from "./retrying-sender.js";
import { type StoredRecord, storedRecords } from "./store-records.js";

export interface FaultScenarioOptions extends FaultTiming {
  notifications: number;
  /** Deliveries in flight at once. Default 16. */
  concurrency?: number;
  /** Each round of sending gives up on notifications still not acknowledged after this long. Default 90 s. */
  giveUpMs?: number;
  log?: (line: string) => void;
}

/** The figures of one run, as printed and as `bench/faults.ts` reports them. */
export interface FaultFigures {
  notifications: number;
  deliveries: number;
  acknowledged: number;
  answers: Record<string, number>;
  answers_by_phase: Record<string, Record<string, number>>;
  redis_restarts: number;
  redis_freezes: number;
  receivers_killed: number;
  /** Handlers the killed process started and never saw completed, and of those, the ones past their effect. */
  left_unfinished_by_kill: number;
  unfinished_after_effect: number;
  /** Records not completed once the load is over and background completions have landed. */
  left_open_after_load: number;
  left_open_unexplained: number;
  /** The second delivery of every notification: acknowledged, and how ("already processed", "processed"). */
  second_delivery_acknowledged: number;
  second_delivery_answers: Record<string, number>;
  lost: number;
  duplicates: number;
  duplicates_explained_by_kill: number;
  duplicates_unexplained: number;
  /** Records not completed at the very end (after the second delivery). */
  records_not_completed: number;
  /** Records claimed more than once: takeovers after a kill, or claims whose answer never arrived. */
  records_retried: number;
  duration_ms: number;
}

export interface FaultScenarioResult {
  figures: FaultFigures;
  ids: string[];
  sent: SenderReport;
  sentAgain: SenderReport;
  verdict: EffectVerdict;
  /** The store's records once the load is over, and at the very end. */
  afterLoad: Map<string, StoredRecord>;
  atEnd: Map<string, StoredRecord>;
  /** Records open after the load that the kill does not account for. */
  leftOpenUnexplained: string[];
  killedPids: number[];
}

/**
 * The scenario of the fault suite. Notifications are sent through two receivers until each is
 * acknowledged, while the faults of `inject-faults.ts` hit the store's Redis and a receiver. Then every
 * notification is delivered once more, as a platform that delivers at least once may, which only a
 * store that kept and completed its records answers without running a handler again. Finally the
 * journal of effects and the store are read back and judged.
 */
export async function runFaultScenario(rig: FaultRig, options: FaultScenarioOptions): Promise<FaultScenarioResult> {
  const log = options.log ?? (() => {});
  const total = options.notifications;
  const concurrency = options.concurrency ?? 16;
  const notifications = Array.from({ length: total }, () =>
    buildNotification("SUBSCRIPTION_RENEW", undefined, { random: true }),
  );
  const ids = notifications.map((notification) => notification.id);
  const route = () => rig.receivers[Math.floor(Math.random() * rig.receivers.length)]!.url;
  let phase = "steady";
  const giveUpMs = options.giveUpMs ?? 90_000;
  const started = performance.now();

  // The platform re-serialises each retry (other key order and spacing): the same notification to us.
  const sender = startSender({
    notifications,
    concurrency,
    route,
    phase: () => phase,
    giveUpAt: started + giveUpMs,
    reserialiseRetries: true,
  });

  const injected: InjectedFaults = { redisRestarts: 0, redisFreezes: 0, killedPids: [] };
  const enter = (next: string) => {
    phase = next;
    log(`${((performance.now() - started) / 1000).toFixed(1)} s: ${next}`);
  };
  const reached = (fraction: number) => sender.reached(Math.floor(total * fraction));
  const faults = injectFaults(rig, reached, enter, options, injected).catch((err: unknown) => {
    sender.stop();
    throw err;
  });
  const [sent] = await Promise.all([sender.done, faults]);
  const durationMs = performance.now() - started;
  log(`${(durationMs / 1000).toFixed(1)} s: ${sent.acknowledged.size} of ${total} acknowledged`);

  const journalNow = () => readJournal(rig.journal, rig.journalPrefix);
  const mayStayOpen = judgeEffects(ids, await journalNow(), injected.killedPids).unfinishedAfterEffect;
  const afterLoad = await settledRecords(rig.storeRedis.url, ids, mayStayOpen);
  const leftOpen = ids.filter((id) => afterLoad.get(id)?.state !== "completed");

  const again = {
    notifications,
    concurrency,
    route,
    phase: () => "second delivery",
    giveUpAt: performance.now() + giveUpMs,
    reserialiseRetries: true,
  };
  const sentAgain = await startSender(again).done;
  log(`second delivery: ${JSON.stringify(sentAgain.acknowledgedAs)}`);

  const atEnd = await settledRecords(rig.storeRedis.url, ids, new Set());
  const verdict = judgeEffects(ids, await journalNow(), injected.killedPids);
  const leftOpenUnexplained = leftOpen.filter((id) => !verdict.unfinishedAfterEffect.has(id));

  return {
    figures: {
      notifications: total,
      deliveries: sent.deliveries,
      acknowledged: sent.acknowledged.size,
      answers: sent.answers as Record<string, number>,
      answers_by_phase: sent.answersByPhase as Record<string, Record<string, number>>,
      redis_restarts: injected.redisRestarts,
      redis_freezes: injected.redisFreezes,
      receivers_killed: injected.killedPids.length,
      left_unfinished_by_kill: verdict.unfinished.length,
      unfinished_after_effect: verdict.unfinishedAfterEffect.size,
      left_open_after_load: leftOpen.length,
      left_open_unexplained: leftOpenUnexplained.length,
      second_delivery_acknowledged: sentAgain.acknowledged.size,
      second_delivery_answers: sentAgain.acknowledgedAs,
      lost: verdict.lost.length,
      duplicates: verdict.duplicates.length,
      duplicates_explained_by_kill: verdict.explained.length,
      duplicates_unexplained: verdict.unexplained.length,
      records_not_completed: ids.filter((id) => atEnd.get(id)?.state !== "completed").length,
      records_retried: [...atEnd.values()].filter((record) => record.attempts > 1).length,
      duration_ms: Math.round(durationMs),
    },
    ids,
    sent,
    sentAgain,
    verdict,
    afterLoad,
    atEnd,
    leftOpenUnexplained,
    killedPids: injected.killedPids,
  };
}

/**
 * The store's records once the background completion retries (of answers given while a store call
 * failed) have landed: every record completed, except ones a killed process may have left open (its
 * handler's effect happened, the completion died with it). Gives up waiting after 20 s and returns
 * what is there.
 */
async function settledRecords(
  url: string,
  ids: string[],
  mayStayOpen: Set<string>,
): Promise<Map<string, StoredRecord>> {
  const deadline = performance.now() + 20_000;
  for (;;) {
    const records = await storedRecords(url, ids);
    const open = ids.filter((id) => records.get(id)?.state !== "completed" && !mayStayOpen.has(id));
    if (open.length === 0 || performance.now() > deadline) return records;
    await sleep(250);
  }
}
