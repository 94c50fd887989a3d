import type { ClaimHandle, IdempotencyStore } from "../idempotency/store.js";
import type { RunAgain } from "./queue.js";

export interface HeldClaim {
  store: IdempotencyStore;
  /** The receiver's claim (with `ordering`, its key too, held while the notification waits). */
  claim: ClaimHandle;
  leaseMs: number;
}

/** Renewals tried when the notification's turn comes before it is given up as not confirmable. */
const CONFIRM_TRIES = 3;

/**
 * Wrap the run of a notification that waits in an in-process queue. While it waits, its lease is
 * renewed (a third of the lease apart), so a redelivery meets 409 instead of taking the record over
 * and running the handler a second time. When its turn comes, the claim must be confirmed live with
 * at least half its lease left: a renewal that answers within half a lease of being sent (tried up to
 * three times), or, while the store cannot be reached, the last renewal that did. If another process
 * took the record over, or the claim cannot be confirmed, the handler is not run and `onLost` is told.
 */
export function holdClaimWhileQueued(
  claim: HeldClaim,
  run: () => Promise<void | RunAgain>,
  onLost: () => void,
): () => Promise<void | RunAgain> {
  const margin = claim.leaseMs / 2;
  // The receiver's claim was answered just before this: its lease counts from about now.
  let confirmedFrom = performance.now();
  let lost = false;
  /** True when confirmed with time left, false when lost, undefined when it could not be told. */
  const renew = async (): Promise<boolean | undefined> => {
    const sent = performance.now();
    let held: boolean;
    try {
      held = await claim.store.extend(claim.claim, claim.leaseMs);
    } catch {
      return undefined;
    }
    if (!held) {
      lost = true;
      return false;
    }
    confirmedFrom = sent;
    return claim.leaseMs - (performance.now() - sent) >= margin ? true : undefined;
  };
  const beat = () => {
    const heartbeat = setInterval(
      () => {
        void renew().then((held) => held === false && clearInterval(heartbeat));
      },
      Math.max(1, Math.floor(claim.leaseMs / 3)),
    );
    heartbeat.unref?.();
    return heartbeat;
  };
  let heartbeat = beat();
  // Held again while it waits to run again (its handler asked to be retried later, and the run kept
  // the claim with a renewal): the same renewals, and the same confirmation when its time comes.
  const runHeld = async (): Promise<void | RunAgain> => {
    const again = await run();
    if (again) {
      confirmedFrom = performance.now();
      heartbeat = beat();
    }
    return again;
  };

  return async () => {
    clearInterval(heartbeat);
    for (let i = 0; i < CONFIRM_TRIES && !lost; i++) {
      const held = await renew();
      if (held) return runHeld();
    }
    // Unconfirmed: still run on a renewal recent enough (the store is away, the lease still holds).
    if (!lost && claim.leaseMs - (performance.now() - confirmedFrom) >= margin) return runHeld();
    onLost();
  };
}
