import { OUTCOMES, type Outcome } from "./outcomes.js";

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
