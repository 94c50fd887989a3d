import type { Logger } from "pino";
import { OUTCOMES, type Outcome } from "../dispatch/outcomes.js";
import type { ReceiveObservation } from "../telemetry/observe-receive.js";

// How a request ends: its verdict (an outcome, the log fields, any variation), then the answer built
// from the `OUTCOMES` table and the one log line per notification.

/** The body the platform expects from every notification endpoint. */
export interface Answer {
  processed: boolean;
  message: string;
}

/** What the core hands back to an adapter: everything needed to write the HTTP response. */
export interface ReceiverResponse {
  status: number;
  headers: Record<string, string>;
  /** The serialized `Answer`, ready to write. */
  body: string;
  answer: Answer;
}

/**
 * `"semantic"` maps each outcome to the status in the README's table; `200` answers every notification
 * with HTTP 200 and lets `processed` alone carry the verdict (for senders that treat any non-2xx as a
 * transport error).
 */
export type FailureStatus = "semantic" | 200;

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

export function respond(
  status: number,
  answer: Answer,
  failureStatus: FailureStatus,
  extraHeaders?: Record<string, string>,
): ReceiverResponse {
  return {
    status: failureStatus === 200 ? 200 : status,
    headers: extraHeaders ? { ...JSON_HEADERS, ...extraHeaders } : { ...JSON_HEADERS },
    body: JSON.stringify(answer),
    answer,
  };
}

/**
 * The answers whose message and headers never vary, built once per receiver: most notifications end
 * in one of them, and sharing the frozen response saves a serialization and two objects per request.
 */
export function responsesByOutcome(failureStatus: FailureStatus): Readonly<Record<Outcome, ReceiverResponse>> {
  const out = {} as Record<Outcome, ReceiverResponse>;
  for (const [outcome, row] of Object.entries(OUTCOMES) as [Outcome, (typeof OUTCOMES)[Outcome]][]) {
    const response = respond(row.status, { processed: row.processed, message: row.message }, failureStatus);
    Object.freeze(response.headers);
    Object.freeze(response.answer);
    out[outcome] = Object.freeze(response);
  }
  return out;
}

/** `Retry-After` takes whole seconds; never advertise 0, which some senders read as "now, in a loop". */
export function retryAfter(ms: number): Record<string, string> {
  return { "retry-after": String(Math.max(1, Math.ceil(ms / 1000))) };
}

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

/**
 * The one log line, one shape for every request: its fields are copied by name, where spreading the
 * verdict's fields made an object whose shape depended on which fields the verdict carried, and cost
 * pino twice the time to write (6.1 against 3.1 µs per line). A field left undefined is not written,
 * so the line holds exactly the fields it held before. Declaring every `LogFields` key here is checked
 * by the compiler: a field added there and not here is an error, not a field silently dropped.
 */
class LogLine implements Record<keyof LogFields, unknown> {
  notification_id: string | undefined;
  event_type: string | undefined;
  merchant_id: string | undefined;
  subscription_id: string | undefined;
  attempt: number | undefined;
  reason: string | undefined;
  detail: string | undefined;
  err: unknown;
  outcome: string;
  status: number;
  duration_ms: number;
  /** Notifications the receiver holds at the moment the line is written (backpressure's count). */
  in_flight: number;
  /** Set by telemetry when a span records the request; declared so the line keeps its shape. */
  trace_id: string | undefined = undefined;
  span_id: string | undefined = undefined;

  constructor(fields: LogFields, outcome: string, status: number, durationMs: number, inFlight: number) {
    this.notification_id = fields.notification_id;
    this.event_type = fields.event_type;
    this.merchant_id = fields.merchant_id;
    this.subscription_id = fields.subscription_id;
    this.attempt = fields.attempt;
    this.reason = fields.reason;
    this.detail = fields.detail;
    this.err = fields.err;
    this.outcome = outcome;
    this.status = status;
    this.duration_ms = durationMs;
    this.in_flight = inFlight;
  }
}

/**
 * The last step: turn a verdict into the answer, and write the one log line per notification. The
 * request's observation, if any, ends here too: it reads the line, and adds the trace ids to it.
 * `inFlight` is the receiver's count of notifications in flight, shown as `in_flight` on each line.
 */
export function answerAndLog(
  logger: Logger,
  failureStatus: FailureStatus,
  inFlight: () => number = () => 0,
): (verdict: Verdict, started: number, observation?: ReceiveObservation) => ReceiverResponse {
  const fixedResponses = responsesByOutcome(failureStatus);
  return ({ outcome, fields, message, headers }, started, observation) => {
    const row = OUTCOMES[outcome];
    const response =
      message !== undefined || headers
        ? respond(row.status, { processed: row.processed, message: message ?? row.message }, failureStatus, headers)
        : fixedResponses[outcome];
    const line = new LogLine(
      fields,
      outcome,
      response.status,
      Math.round((performance.now() - started) * 1000) / 1000,
      inFlight(),
    );
    observation?.end(line);
    // A handler that asked to be retried later failed nothing for good: a warning, not an error.
    if (outcome === "handler_retry_later")
      logger.warn(line, "notification not processed; its handler asked to be retried later");
    else if (outcome === "handler_refused") logger.error(line, "notification refused by its handler; not retried");
    else if (row.status >= 500) logger.error(line, "notification not processed");
    else if (row.status >= 400) logger.warn(line, "notification rejected");
    else logger.info(line, "notification handled");
    return response;
  };
}
