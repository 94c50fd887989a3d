import { redactCardText } from "./card-numbers.js";

/**
 * The request headers kept wherever a notification is stored (recordings, BullMQ job data): those
 * that describe a delivery. Everything else is dropped, because a credential can hide under any name
 * (`x-api_key`, `x-auth`, `x-merchant-hmac-sha256`), and a deny-list only knows the names it lists.
 */
export const KEPT_HEADERS: ReadonlySet<string> = new Set([
  "accept",
  "accept-encoding",
  "content-encoding",
  "content-length",
  "content-type",
  "date",
  "user-agent",
  "request-id",
  "x-request-id",
  "x-correlation-id",
  "traceparent",
  "tracestate",
  "webhook-id",
  "webhook-timestamp",
]);

/**
 * The kept headers of a request, names lower-case as `normalizeHeaders` gives them, each value with
 * its card data redacted: a request id or a user agent is the sender's text, and may carry a card
 * number or a verification code as well as any field of the body.
 */
export function keptHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) if (KEPT_HEADERS.has(name)) out[name] = redactCardText(String(headers[name]));
  return out;
}
