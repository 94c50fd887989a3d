/** One HTTP attempt to deliver a notification or event. */
export interface DeliveryAttempt {
  /** HTTP status; 0 when no answer came (connection refused or reset, or the attempt timed out). */
  status: number;
  /** The answer said `processed: true` with a 2xx status. */
  processed: boolean;
  /** Time from sending to the whole answer. */
  ms: number;
  /** The answer's `message`, or why no answer came. */
  message: string;
  /** When the attempt was sent, RFC 3339 with milliseconds. */
  at: string;
}

export type DeliveryKind = "subscription" | "order" | "refund";

/** One delivery: a notification (or a duplicate of one) and every attempt made to deliver it. */
export interface DeliveryRecord {
  id: string;
  kind: DeliveryKind;
  event_type: string;
  subscription_id?: string;
  url: string;
  /** An attempt was answered `processed: true`. */
  delivered: boolean;
  /** Attempts remain (or one is under way). False with `delivered` false: the schedule is exhausted. */
  pending: boolean;
  /** A chaos duplicate: the same notification sent again as a separate delivery. */
  duplicate: boolean;
  /** Lost by chaos (`dropRate`): never attempted, as a platform that never sends it. */
  dropped?: boolean;
  /** Held back by the chaos reorder window before its first attempt. */
  held: boolean;
  /** The order in which deliveries made their first attempt (1-based); 0 before it. */
  firstSent: number;
  attempts: DeliveryAttempt[];
}

export interface UndeliveredSummary {
  /** Deliveries whose schedule ran out without `processed: true`. */
  exhausted: DeliveryRecord[];
  /** Deliveries with attempts still to come. */
  pending: DeliveryRecord[];
}

export function undeliveredOf(records: readonly DeliveryRecord[]): UndeliveredSummary {
  return {
    exhausted: records.filter((record) => !record.delivered && !record.pending),
    pending: records.filter((record) => !record.delivered && record.pending),
  };
}

const snapshot = (record: DeliveryRecord): DeliveryRecord => ({
  ...record,
  attempts: record.attempts.map((attempt) => ({ ...attempt })),
});

/** A copy the caller may keep: later attempts do not change it. */
export const snapshotDeliveries = (records: readonly DeliveryRecord[]) => records.map(snapshot);
