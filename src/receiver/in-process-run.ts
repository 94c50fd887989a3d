import { type ClaimedHooks, type ClaimedOutcome, type ClaimedRun, runClaimed } from "../dispatch/run-claimed.js";
import { holdClaimWhileQueued } from "../queue/hold-claim.js";
import type { RunAgain } from "../queue/queue.js";

/** Runs of one notification in an in-process queue when its handler keeps asking to be retried later. */
export const MAX_IN_PROCESS_RUNS = 8;

/** What a queued run tells when it ends: its outcome, when it started, and why it is not run again. */
export type LogRun = (result: ClaimedOutcome, started: number, last?: string) => void;

/**
 * The `run` an in-process queue calls for a claimed notification, whether this receiver accepted it
 * or took over a claim whose holder died (`resumeLapsed`): its claim is held while it waits, and the
 * handler runs only if the claim is still this receiver's (`holdClaimWhileQueued`; `onLost` is told).
 */
export function inProcessRun(
  run: ClaimedRun,
  hooks: Pick<ClaimedHooks, "retryCompletion" | "observeHandler">,
  log: LogRun,
  onLost: () => void,
): ReturnType<typeof holdClaimWhileQueued> {
  return holdClaimWhileQueued(
    { store: run.store, claim: run.claim, leaseMs: run.leaseMs },
    runInProcess(run, hooks, log),
    onLost,
  );
}

/**
 * The run of a notification in an in-process queue. A handler's `RetryAfterError` keeps the claim
 * (renewed, so the record stays this receiver's and its subscription stays held) and asks the queue
 * to run it again after the delay, with `ctx.attempt` one higher, up to `MAX_IN_PROCESS_RUNS` runs
 * (then the record fails, as for any error). Nothing retries any other failure here: the sender was
 * answered `processed: true` and does not send it again.
 */
function runInProcess(
  run: ClaimedRun,
  hooks: Pick<ClaimedHooks, "retryCompletion" | "observeHandler">,
  /** `last`: why a run whose handler asked to be retried later is not run again. */
  log: LogRun,
): () => Promise<RunAgain | undefined> {
  let runs = 0;
  return async () => {
    const started = performance.now();
    let again: RunAgain | undefined;
    let last: string | undefined;
    runs++;
    const holdForRetry = async (delayMs: number) => {
      if (runs >= MAX_IN_PROCESS_RUNS) {
        last = `not run again: ${MAX_IN_PROCESS_RUNS} runs in this queue`;
        return false;
      }
      const held = await Promise.resolve(run.store.extend(run.claim, run.leaseMs)).catch(() => false);
      if (held) again = { runAgainInMs: delayMs };
      else last = "not run again: the claim could not be kept";
      return held;
    };
    const result = await runClaimed(run, { ...hooks, holdForRetry });
    log(result, started, last);
    if (again) run.attempt += 1;
    return again;
  };
}
