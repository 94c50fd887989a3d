import type { Awaitable } from "../idempotency/store.js";

/**
 * One order the merchant asked the platform to create, as the ledger keeps it. It is written before
 * CreateOrder is sent (without `id`) and filled in from the answer, so an order whose answer never came
 * back (a time-out, a crash mid-call) is still known by its `reference_id`, which QueryOrder accepts.
 */
export interface OrderLedgerEntry {
  /** The merchant's reference id: the entry's key, with `merchant_id`. */
  reference_id: string;
  merchant_id?: string | undefined;
  /** The platform's order id, once CreateOrder answered. */
  id?: string | undefined;
  /** The status CreateOrder answered (a status nobody was told of by an event), or the last one reconciled. */
  status?: string | undefined;
  /** Epoch ms when the order was asked for. */
  created_at: number;
}

/** Where `createPaymentClient` remembers the orders it creates, for `merchant-webhooks/reconcile`. */
export interface OrderLedger {
  /** Writes or replaces the entry of (`merchant_id`, `reference_id`). */
  record(entry: OrderLedgerEntry): Awaitable<void>;
  /**
   * Entries still open (not closed), created in [`from`, `to`], oldest first, ties by reference id;
   * `after` is the last entry of the page before (its `created_at` and key), `limit` the page's size.
   */
  open(query: {
    from: number;
    to: number;
    after?: { created_at: number; key: string } | undefined;
    limit: number;
  }): Awaitable<OrderLedgerEntry[]>;
  /** The order reached a final state and its effect is done: it is not checked again. */
  close(entry: Pick<OrderLedgerEntry, "reference_id" | "merchant_id">): Awaitable<void>;
}

/** The key an entry is kept under: its merchant and reference id (reference ids are unique per merchant). */
export const ledgerKey = (entry: Pick<OrderLedgerEntry, "reference_id" | "merchant_id">): string =>
  `${entry.merchant_id ?? ""}\u0000${entry.reference_id}`;

/** Whether entry `a` comes after the page position `after` (oldest first, then by key). */
export function ledgerAfter(a: OrderLedgerEntry, after: { created_at: number; key: string } | undefined): boolean {
  if (after === undefined) return true;
  return a.created_at > after.created_at || (a.created_at === after.created_at && ledgerKey(a) > after.key);
}

/** An order ledger in this process's memory: for tests and a single process; a restart forgets it. */
export function memoryOrderLedger(): OrderLedger & { readonly size: number } {
  const entries = new Map<string, OrderLedgerEntry>();
  return {
    get size() {
      return entries.size;
    },
    record(entry) {
      entries.set(ledgerKey(entry), { ...entry });
    },
    open({ from, to, after, limit }) {
      return [...entries.values()]
        .filter((entry) => entry.created_at >= from && entry.created_at <= to && ledgerAfter(entry, after))
        .sort((a, b) => a.created_at - b.created_at || (ledgerKey(a) < ledgerKey(b) ? -1 : 1))
        .slice(0, limit)
        .map((entry) => ({ ...entry }));
    },
    close(entry) {
      entries.delete(ledgerKey(entry));
    },
  };
}
