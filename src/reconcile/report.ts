/** A gap: something the platform changed that no processed notification or event told the merchant. */
export type ReconcileGap =
  | {
      /** An order's status changed with no processed order event for that status. */
      kind: "order_status";
      order_id: string;
      reference_id: string;
      status: string;
      /** Repair mode: the order-event handler ran with the reconciled event (false: another run or delivery had it). */
      repaired: boolean;
    }
  | {
      /** A subscription's next renewal is past due (plus the grace) and no later notification was processed. */
      kind: "renewal_overdue";
      subscription_id: string;
      /** When the renewal was due (RFC 3339): the last notification's `next_execution_time`. */
      expected_at: string;
      last_notification: { id: string; event_type: string; execution_phase?: string | undefined; update_time: string };
    }
  | {
      /**
       * The fund-split detail list has a record of this order (the platform settled it), and no processed
       * notification or order event named it, nor did a repair. Detection only.
       */
      kind: "settlement_unmatched";
      order_id: string;
      /** The record's key (the `settlements.key` given, else its whole content's digest). */
      record_key: string;
    };

export interface ReconcileError {
  /** What was being checked: an order (by reference id) or a subscription. */
  kind: "order" | "subscription" | "settlement";
  id: string;
  message: string;
  code?: string | undefined;
}

/** What one run found and did. */
export interface ReconcileReport {
  run_id: string;
  mode: "audit" | "repair";
  /** `completed`; `busy` when another run held the lock (nothing was checked). */
  status: "completed" | "busy";
  started_at: string;
  finished_at?: string | undefined;
  /** The look-back window of order creation times checked, RFC 3339. */
  window: { from: string; to: string };
  /** Set when the run picked up a run that died, from its checkpoint. */
  resumed_from?: string | undefined;
  checked: { orders: number; subscriptions: number; settlements?: number | undefined };
  gaps: ReconcileGap[];
  /** Gaps whose handler ran in this run (repair mode). */
  repaired: number;
  errors: ReconcileError[];
}
