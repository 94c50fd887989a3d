import type { Outcome } from "../answer/outcomes.js";

/** Fields of the one log line written per notification. */
export interface LogFields {
  notification_id?: string;
  event_type?: string;
  merchant_id?: string;
  subscription_id?: string;
  attempt?: number;
  reason?: string;
  /** What the reason code means for this request (a signature failure's specifics), never a secret. */
  detail?: string;
  err?: unknown;
}

/** How a request ends, before it is answered and logged: an outcome, its log fields, and any variation. */
export interface Verdict {
  outcome: Outcome;
  fields: LogFields;
  /** Replaces the outcome's fixed message. */
  message?: string;
  /** Added to the answer's headers (`Retry-After`, `Allow`). */
  headers?: Record<string, string>;
}

export const verdict = (
  outcome: Outcome,
  fields: LogFields = {},
  extra: Omit<Verdict, "outcome" | "fields"> = {},
): Verdict => ({
  outcome,
  fields,
  ...extra,
});
