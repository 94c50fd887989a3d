import { maskCardText } from "../logging/card-numbers.js";
import type { ClaimFlags } from "./claim-flags.js";
import type { ListedAs } from "./store.js";

/**
 * What a record keeps of its notification for the console's filters: the event type and the
 * subscription id as sent, a card-like run in either masked as a job's data masks it (no full card
 * number at rest). The console masks a filter's value the same way, so it still finds such a record.
 */
export function listedAs(eventType: unknown, subscriptionId: unknown): ListedAs {
  const listed: ListedAs = {};
  if (typeof eventType === "string" && eventType !== "") listed.eventType = listedText(eventType);
  if (typeof subscriptionId === "string" && subscriptionId !== "") listed.subscriptionId = listedText(subscriptionId);
  return listed;
}

/** A filter's value as records keep it. */
export const listedText = (text: string): string => maskCardText(text);

/**
 * What a claim tells a store to keep for the list: what it says (`listedAs`), and, for a claim in order
 * that names no subscription, the subscription its order key names. A store keeps what the first claim
 * that told anything told: a notification's event type and subscription never change.
 */
export function listedAsOf(request: Pick<ClaimFlags, "listedAs" | "order">): ListedAs | undefined {
  const told = request.listedAs;
  if (told?.subscriptionId !== undefined || request.order === undefined) return told;
  return { ...told, subscriptionId: listedText(subscriptionOfKey(request.order.key) ?? request.order.key) };
}

/**
 * The subscription id in an order key of the receiver's default form (`merchant:subscription`, each
 * part URI-encoded), so a lane's records are found by their subscription whatever else is known of them.
 */
export function subscriptionOfKey(key: string | undefined): string | undefined {
  const parts = key?.split(":");
  if (parts?.length !== 2 || parts[1] === "") return undefined;
  try {
    return decodeURIComponent(parts[1]!);
  } catch {
    return undefined;
  }
}
