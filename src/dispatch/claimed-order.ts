import type { ClaimResult, OrderClaim } from "../idempotency/store.js";
import type { Handler } from "./handlers.js";

/** What the run of a notification claimed in order needs beside the claim itself. */
export interface ClaimedOrder {
  /** The store found it older than the key's newest completion: `onStale` runs instead of its handler. */
  stale: boolean;
  /** The key's newest completed position (sortable form): before this one, or after it when stale. */
  newest: string | undefined;
  onStale: Handler | undefined;
}

/** 409 reason and message when the notification's subscription, not its id, is held. */
export const SUBSCRIPTION_BUSY = "another notification of this subscription is being processed";

export function claimedOrder(
  order: OrderClaim | undefined,
  claim: Extract<ClaimResult, { status: "claimed" | "stale" }>,
  onStale: Handler | undefined,
): ClaimedOrder | undefined {
  if (!order) return undefined;
  return claim.status === "stale"
    ? { stale: true, newest: claim.newestPosition, onStale }
    : { stale: false, newest: claim.previousPosition, onStale };
}
