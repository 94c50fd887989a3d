/**
 * Every way a notification can end, with the HTTP status and `processed` flag the README's table gives
 * it. One table, so adapters, logs and the docs cannot disagree.
 */
export const OUTCOMES = {
  processed: { status: 200, processed: true, message: "processed" },
  duplicate: { status: 200, processed: true, message: "already processed" },
  unhandled: { status: 200, processed: true, message: "no handler for this event type; acknowledged" },
  queued: { status: 200, processed: true, message: "accepted for processing" },
  stale: {
    status: 200,
    processed: true,
    message: "stale: older than the newest completed notification of its subscription",
  },
  invalid: { status: 400, processed: false, message: "invalid notification" },
  unauthorized: { status: 401, processed: false, message: "signature verification failed" },
  forbidden: { status: 403, processed: false, message: "this sender may not send this notification" },
  method_not_allowed: { status: 405, processed: false, message: "method not allowed; use POST" },
  body_timeout: { status: 408, processed: false, message: "body not received in time" },
  in_progress: { status: 409, processed: false, message: "notification is being processed; retry later" },
  too_large: { status: 413, processed: false, message: "body too large" },
  unsupported_media_type: { status: 415, processed: false, message: "content-type must be application/json" },
  conflict: { status: 422, processed: false, message: "notification id already used with a different payload" },
  handler_failed: { status: 500, processed: false, message: "handler failed" },
  handler_timeout: { status: 500, processed: false, message: "handler timed out" },
  // A handler's `NonRetriableError` and `RetryAfterError` (docs/queues.md#a-handler-steers-its-retries).
  handler_refused: {
    status: 500,
    processed: false,
    message: "handler refused this notification; keep it: this receiver does not retry it",
  },
  handler_retry_later: { status: 500, processed: false, message: "handler asked to be retried later" },
  internal_error: { status: 500, processed: false, message: "internal error" },
  misconfigured: { status: 500, processed: false, message: "receiver misconfigured" },
  unavailable: { status: 503, processed: false, message: "temporarily unavailable; retry later" },
  overloaded: { status: 503, processed: false, message: "overloaded; retry later" },
} as const satisfies Record<string, { status: number; processed: boolean; message: string }>;

export type Outcome = keyof typeof OUTCOMES;
