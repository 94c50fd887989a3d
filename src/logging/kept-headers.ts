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

/** The kept headers of a request, names lower-case as `normalizeHeaders` gives them. */
export function keptHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) if (KEPT_HEADERS.has(name)) out[name] = headers[name]!;
  return out;
}
