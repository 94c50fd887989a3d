import { keptHeaders } from "../logging/kept-headers.js";
import type { QueuedNotification } from "../queue/queue.js";
import type { SubscriptionNotification } from "../schema/index.js";

/** What a queued notification carries to the worker: everything the handler's context needs. */
export interface NotificationJobData {
  /** The notification as validated by the receiver; the worker validates it again. */
  notification: SubscriptionNotification;
  /** The request headers that describe the delivery (`KEPT_HEADERS`, lower-case names). */
  headers: Record<string, string>;
  /** Epoch ms at which the receiver accepted the notification. */
  receivedAt: number;
  /** SHA-256 of the bytes received: the worker's claim must match the receiver's. */
  fingerprint: string;
}

export function jobDataFor(item: QueuedNotification): NotificationJobData {
  return {
    notification: item.notification,
    // Job data sits in Redis, dashboards and the failed set: only headers that describe the delivery.
    headers: keptHeaders(item.headers),
    receivedAt: item.receivedAt,
    fingerprint: item.fingerprint,
  };
}
