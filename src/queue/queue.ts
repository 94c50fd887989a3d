import type { SubscriptionNotification } from "../schema/index.js";
import type { OrderClaim } from "../idempotency/store.js";

/** A validated, claimed notification handed to a queue. */
export interface QueuedNotification {
  id: string;
  fingerprint: string;
  notification: SubscriptionNotification;
  headers: Readonly<Record<string, string>>;
  receivedAt: number;
  /** With `ordering`: the key and position it was claimed under; a worker claims it again under them. */
  order?: OrderClaim;
  /** Runs the handler under the receiver's claim; in-process queues call it, durable queues ignore it. */
  run: () => Promise<void>;
}

/**
 * The receiver's `queue` option. `enqueue` resolves once the notification is accepted (durably, for a
 * `durable` queue) and rejects when it cannot be: the receiver then answers 503 and releases the claim.
 */
export interface NotificationQueue {
  /** Durable queues survive the receiver; their records are marked `queued` for a worker to take over. */
  readonly durable: boolean;
  enqueue(item: QueuedNotification): Promise<void>;
  close?(): Promise<void>;
}
