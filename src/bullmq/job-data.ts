import type { QueuedNotification } from "../queue/queue.js";
import type { SubscriptionNotification } from "../schema/index.js";

/** What a queued notification carries to the worker: everything the handler's context needs. */
export interface NotificationJobData {
  /** The notification as validated by the receiver; the worker validates it again. */
  notification: SubscriptionNotification;
  /** Request headers (lower-case names) without credentials or signatures. */
  headers: Record<string, string>;
  /** Epoch ms at which the receiver accepted the notification. */
  receivedAt: number;
  /** SHA-256 of the bytes received: the worker's claim must match the receiver's. */
  fingerprint: string;
}

/**
 * Headers that authenticate the request rather than describe it. They would sit in Redis, in job
 * dashboards and in the failed set for as long as the job is kept, and a handler has no use for them
 * once the receiver has checked the signature.
 */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie)$|signature|secret|token|api-?key/i;

export function forwardedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADER.test(name)) out[name] = value;
  }
  return out;
}

export function jobDataFor(item: QueuedNotification): NotificationJobData {
  return {
    notification: item.notification,
    headers: forwardedHeaders(item.headers),
    receivedAt: item.receivedAt,
    fingerprint: item.fingerprint,
  };
}
