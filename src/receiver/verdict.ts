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

/** Answers an adapter gives before the core can see a body. */
export type EarlyRejection = "too_large" | "body_consumed" | "unreadable" | "body_timeout" | "unsupported_media_type";

/** What the early answers depend on: the receiver's limits, and how its framework turns a parser off. */
export interface EarlyRules {
  bodyLimit: number;
  bodyTimeoutMs: number;
  verifies: boolean;
  /** The fix a misconfigured body parser needs, in the framework's terms (see `AdapterHints`). */
  bodyParserFix?: string | undefined;
}

const GENERIC_BODY_PARSER_FIX = "mount the webhook before any body parser";

/** The verdict for each reason an answer comes before the core sees a notification. */
export function earlyVerdict(reason: EarlyRejection, rules: EarlyRules): Verdict {
  switch (reason) {
    case "too_large":
      return verdict("too_large", {}, { message: `body exceeds the limit of ${rules.bodyLimit} bytes` });
    case "unreadable":
      return verdict(
        "invalid",
        { reason: "request body could not be read" },
        { message: "request body could not be read" },
      );
    case "body_timeout":
      return verdict("body_timeout", { reason: `body not received within ${rules.bodyTimeoutMs} ms` });
    case "unsupported_media_type":
      return verdict("unsupported_media_type", { reason: "content-type the framework could not parse" });
    case "body_consumed":
      return verdict(
        "misconfigured",
        { reason: "body already parsed" },
        {
          message: rules.verifies
            ? `receiver misconfigured: a body parser consumed the raw body, so the signature cannot be checked; ${rules.bodyParserFix ?? GENERIC_BODY_PARSER_FIX}`
            : `receiver misconfigured: the request body was consumed before the webhook could read it; ${rules.bodyParserFix ?? GENERIC_BODY_PARSER_FIX}`,
        },
      );
  }
}

/** A failure in an adapter or the core (a bug, never bad input): 500, so the sender keeps the notification. */
export function internalErrorVerdict(err: unknown): Verdict {
  return verdict("internal_error", { reason: "webhook request failed", err });
}
