import type { ClaimHandle, IdempotencyStore } from "../idempotency/store.js";

export interface HeldClaim {
  store: IdempotencyStore;
  /** The receiver's claim (with `ordering`, its key too, held while the notification waits). */
  claim: ClaimHandle;
  leaseMs: number;
}

/**
 * Wrap the run of a notification that waits in an in-process queue. While it waits, its lease is
 * renewed (a third of the lease apart), so a redelivery meets 409 instead of taking the record over
 * and running the handler a second time. When its turn comes, it renews once more to check it still
 * owns the record; if another process took it over, the handler is not run and `onLost` is told.
 * A store that cannot be reached proves nothing either way: the run goes ahead, as a running handler's
 * heartbeat does.
 */
export function holdClaimWhileQueued(
  claim: HeldClaim,
  run: () => Promise<void>,
  onLost: () => void,
): () => Promise<void> {
  const renew = () => Promise.resolve(claim.store.extend(claim.claim, claim.leaseMs));
  const heartbeat = setInterval(
    () => {
      renew().then(
        (held) => held || clearInterval(heartbeat),
        () => {},
      );
    },
    Math.max(1, Math.floor(claim.leaseMs / 3)),
  );
  heartbeat.unref?.();

  return async () => {
    clearInterval(heartbeat);
    const held = await renew().catch(() => true);
    if (!held) return onLost();
    await run();
  };
}
