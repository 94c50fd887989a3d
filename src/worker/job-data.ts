import type { OrderClaim } from "../idempotency/store.js";
import { maskCardNumber, maskCardText, REDACTED } from "../logging/card-numbers.js";
import { keptHeaders } from "../logging/kept-headers.js";
import { type PayloadPolicy, transformPayload } from "../logging/transform-payload.js";
import type { QueuedNotification } from "../queue/queue.js";
import { passesEnvelopeCheck } from "../schema/envelope-check.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { subscriptionNotificationSchema } from "../schema/index.js";
import { validationMessage } from "../schema/validation-message.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import { open, SealError, type SealedPayload, type SealingKey, seal } from "./seal.js";

/**
 * What a queued notification carries to the worker, as it sits in Redis (and, for a failed job, stays
 * there until redriven or removed). Exactly one of `notification` and `sealed` is present.
 */
export interface NotificationJobData {
  /**
   * The id of the notification's record (its notification id, or `tenant/id` under `authorizeSender`)
   * and its event type, in clear for dashboards and logs. The worker claims that record.
   */
  id: string;
  event_type: string;
  /**
   * Without an `encryptionKey`: the notification with card verification data replaced by
   * `[REDACTED]`, card numbers masked to their first six and last four digits, and card hashes and
   * contract ids replaced by `[REDACTED]`. The worker validates it again.
   */
  notification?: SubscriptionNotification;
  /** With an `encryptionKey`: the notification without card verification data, sealed with AES-256-GCM. */
  sealed?: SealedPayload;
  /** The request headers that describe the delivery (`KEPT_HEADERS`, lower-case names). */
  headers: Record<string, string>;
  /** Epoch ms at which the receiver accepted the notification. */
  receivedAt: number;
  /** The payload fingerprint: the worker's claim must match the receiver's. */
  fingerprint: string;
  /**
   * With `ordering`: the key and position the receiver claimed under. The worker claims in order with
   * them, so it needs neither the receiver's key and position functions nor to agree with them.
   */
  order?: OrderClaim;
  /** The receiver's claim token, which the worker may take over (see `TakeClaim.handoffFrom`). */
  handoff?: string;
  /** The receiver's trace context, so the worker's spans join the receiver's trace. */
  trace?: Record<string, string>;
  /** Which part of the queue's ledger (`queue-ledger.ts`) keeps a copy of this data until it is done. */
  ledger?: number;
  /**
   * With `order`, in a dead letter: the handler runs its notification had before it was dead-lettered.
   * A redriven notification of an ordered lane gets its attempts afresh, counted from there.
   */
  lanePrior?: number;
  /**
   * With `order`, set by `redrive`: the id of the dead letter of the same lane redriven just before this
   * one. Its worker waits until that one is back in the lane, so the two run in position order.
   */
  redriveAfter?: string | undefined;
  /**
   * With `order`, in the data a lane keeps (`AppendClaim.carried`): the queue it was appended for, as
   * `prefix:name`. A store may serve several queues; the sweep wakes a lane only in its own.
   */
  queue?: string;
}

/** Card verification data is never written, sealed or not (PCI DSS forbids keeping it after authorization). */
const WITHOUT_VERIFICATION: PayloadPolicy = {
  byKey: (kind) => (kind === "card_verification" ? REDACTED : undefined),
  text: (text) => text,
  cardNumber: (value) => value,
};

/** In clear, card numbers are masked wherever they appear, and what derives from one is dropped. */
const MASKED: PayloadPolicy = {
  byKey: (kind, _key, _parent, value) => {
    if (kind === "card_verification" || kind === "card_derived") return REDACTED;
    if (kind === "card_number")
      return typeof value === "string" || typeof value === "number" ? maskCardNumber(String(value)) : REDACTED;
    return undefined;
  },
  text: maskCardText,
  cardNumber: (value) => maskCardNumber(String(value)),
};

/**
 * The associated data of a sealed job: every field beside the seal, in a fixed order, so whoever can
 * write to Redis can neither move a sealed payload to another job nor change its ordering position,
 * fingerprint, headers, trace context, the receiver's claim a worker may take over (`handoff`) or
 * the ledger part holding its copy. Sealed as version 2, `handoff` and `ledger` were left out; such
 * jobs still open (they drain after an upgrade), and a version-3 seal cannot be opened as version 2.
 */
function jobContext(data: Partial<NotificationJobData>, version: 2 | 3): string {
  const { id, event_type, headers, receivedAt, fingerprint, order, trace, handoff, ledger } = data;
  const common = [
    id,
    event_type,
    sortedEntries(headers),
    receivedAt,
    fingerprint,
    order ? [order.key, order.position ?? null] : null,
    sortedEntries(trace),
  ];
  if (version === 2) return JSON.stringify(["merchant-webhooks job v2", ...common]);
  return JSON.stringify(["merchant-webhooks job v3", ...common, handoff ?? null, ledger ?? null]);
}

const sortedEntries = (record: Record<string, string> | undefined) =>
  record && typeof record === "object" ? Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : null;

/** The job data of a queued notification; `ledger`: the ledger part its copy goes to. */
export function jobDataFor(
  item: Omit<QueuedNotification, "run" | "mailbox" | "carried">,
  key?: SealingKey,
  ledger?: number,
): NotificationJobData {
  const { notification } = item;
  const common = {
    // The record's id: the notification id, inside its tenant's namespace when `authorizeSender` named one.
    id: item.id,
    event_type: notification.event_type,
    // Job data sits in Redis, dashboards and the failed set: only headers that describe the delivery.
    headers: keptHeaders(item.headers),
    receivedAt: item.receivedAt,
    fingerprint: item.fingerprint,
    ...(item.order ? { order: item.order } : {}),
    ...(item.owner ? { handoff: item.owner } : {}),
    ...(item.trace ? { trace: item.trace } : {}),
    ...(ledger !== undefined ? { ledger } : {}),
  };
  if (!key) {
    const masked = transformPayload(notification, MASKED) as SubscriptionNotification;
    // The notification id is the record's key, in clear in the job's own `id` and the store's key name:
    // masking a card-like run in it here would hide nothing and hand the handler another notification's
    // id (`WH-C32638105111479BA3EB` holds a Luhn-valid run), so its effect lands under the wrong id.
    return { ...common, notification: { ...masked, id: notification.id } };
  }
  const text = JSON.stringify(transformPayload(notification, WITHOUT_VERIFICATION));
  return { ...common, sealed: seal(text, key, jobContext(common, 3)) };
}

/**
 * The notification a job carries, still to be validated: opened with the worker's keys when sealed.
 * Throws `SealError` when it cannot be opened, and, when the worker has keys, when it is not sealed:
 * a worker given keys runs only what a queue holding the key added, never a job written around it.
 */
export function notificationIn(data: Partial<NotificationJobData> | undefined, keys: readonly SealingKey[]): unknown {
  if (!data?.sealed) {
    if (keys.length > 0)
      throw new SealError("job data is not sealed, and this worker has an encryptionKey: refused, the handler not run");
    return data?.notification;
  }
  // Sealed before v2, only the id was bound; before v3, not the handoff and ledger. Such jobs drain after an upgrade.
  const { v } = data.sealed;
  const context = v === 1 ? String(data.id) : jobContext(data, v === 2 ? 2 : 3);
  return JSON.parse(open(data.sealed, keys, context));
}

/** A job's data once opened and validated: what a worker runs a notification from. */
export interface NotificationJob {
  /** The record the receiver claimed: the notification id, or `tenant/id` under `authorizeSender`. */
  id: string;
  notification: SubscriptionNotification;
  headers: Record<string, string>;
  receivedAt: number;
  fingerprint: string;
  order?: OrderClaim;
  handoff?: string;
  /** The ledger part holding its copy, when known. */
  ledger?: number;
}

/** Job data that cannot be opened or is not a notification: no retry will read it, so it fails at once. */
export class UnreadableJobDataError extends MerchantWebhooksError {
  override name = "UnreadableJobDataError";
  declare readonly code: "MW_INVALID_JOB_DATA";
  constructor(message: string) {
    super("MW_INVALID_JOB_DATA", message);
  }
}

/**
 * Open and validate a job's data with the worker's keys; `enqueuedAt` stands in for a missing
 * `receivedAt`. Throws `UnreadableJobDataError`, with the reason, when it is not a notification job.
 */
export function readNotificationJob(
  data: Partial<NotificationJobData> | undefined,
  keys: readonly SealingKey[],
  enqueuedAt: number,
): NotificationJob {
  let carried: unknown;
  try {
    carried = notificationIn(data, keys);
  } catch (err) {
    throw new UnreadableJobDataError(err instanceof SealError ? err.message : "job data could not be read");
  }
  const notification = validNotification(carried);
  if (typeof data!.fingerprint !== "string") throw new UnreadableJobDataError("job data has no payload fingerprint");
  const order = data!.order;
  if (
    order !== undefined &&
    (typeof order?.key !== "string" || (order.position !== undefined && typeof order.position !== "string"))
  ) {
    throw new UnreadableJobDataError("job data has a malformed order (key and position must be strings)");
  }
  return {
    ...(order ? { order } : {}),
    ...(typeof data!.handoff === "string" ? { handoff: data!.handoff } : {}),
    ...(typeof data!.ledger === "number" ? { ledger: data!.ledger } : {}),
    // Jobs written before the record id was carried name the notification's own id.
    id: typeof data!.id === "string" && data!.id !== "" ? data!.id : notification.id,
    notification,
    headers: data!.headers ?? {},
    receivedAt: typeof data!.receivedAt === "number" ? data!.receivedAt : enqueuedAt,
    fingerprint: data!.fingerprint,
  };
}

/** A queued job's data once read, with the data as the queue keeps it (sealed, or card numbers masked). */
export interface QueuedJob extends NotificationJob {
  raw: Partial<NotificationJobData>;
}

/**
 * What reading a queued job's data came to, on every queue alike: the notification to run, or why
 * none can be (`unreadable`: no key opens it, or no schema accepts it). Unreadable data stays
 * unreadable however often it is retried: each queue sends the job to its dead letters at once, with
 * the reason and the outcome `invalid` (BullMQ's failed set, pg-boss's dead-letter queue), never
 * running a handler and never dropping it.
 */
export type QueuedJobRead = { job: QueuedJob } | { unreadable: UnreadableJobDataError };

/** Read a queued job's data with the worker's keys (see `readNotificationJob`, `QueuedJobRead`). */
export function readQueuedJob(data: unknown, keys: readonly SealingKey[], enqueuedAt: number): QueuedJobRead {
  const raw = data as Partial<NotificationJobData>;
  try {
    return { job: { ...readNotificationJob(raw, keys, enqueuedAt), raw } };
  } catch (err) {
    if (err instanceof UnreadableJobDataError) return { unreadable: err };
    throw err;
  }
}

/**
 * The notification a job carries, validated as a receiver validates a body: the compiled check
 * accepts most at a third of zod's cost (and only ever accepts), whatever it does not accept goes to
 * zod, which decides and words the reason.
 */
function validNotification(carried: unknown): SubscriptionNotification {
  if (carried !== null && typeof carried === "object" && !Array.isArray(carried)) {
    if (passesEnvelopeCheck(carried as Record<string, unknown>)) return carried as SubscriptionNotification;
  }
  const parsed = subscriptionNotificationSchema.safeParse(carried);
  if (!parsed.success) throw new UnreadableJobDataError(`job data: ${validationMessage(parsed.error.issues)}`);
  return parsed.data;
}
