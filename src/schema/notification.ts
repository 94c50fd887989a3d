import { z } from "zod";
import { EVENT_TYPES, RESOURCE_EVENT_TYPES, SUBSCRIPTION_STATUSES } from "./enums.js";
import {
  renewalEventSchema,
  resumedEventSchema,
  subscriptionEventSchema,
  suspendedEventSchema,
  unsubscriptionEventSchema,
} from "./events.js";
import {
  emailSchema,
  int64Schema,
  ipSchema,
  nonEmptyString,
  openEnum,
  openObject,
  timestampSchema,
} from "./primitives.js";
import { addressSchema } from "./shared.js";

export const subscriberSchema = openObject({
  id: nonEmptyString.max(64).optional(),
  /** Applies to one storefront only. */
  platform_login_id: z.string().optional(),
  name: z.string().optional(),
  email: emailSchema.optional(),
  ip: ipSchema.optional(),
  phone_number: z.string().optional(),
  address: addressSchema.optional(),
});

export const productSchema = openObject({
  id: nonEmptyString.optional(),
  name: z.string().optional(),
  description: z.string().optional(),
});

export const subscriptionResourceSchema = openObject({
  create_time: timestampSchema.optional(),
  update_time: timestampSchema.optional(),
  merchant_id: nonEmptyString.optional(),
  sub_merchant_id: nonEmptyString.optional(),
  id: nonEmptyString.optional(),
  reference_id: z.string().optional(),
  subscription_status: openEnum(SUBSCRIPTION_STATUSES).optional(),
  event_type: openEnum(RESOURCE_EVENT_TYPES).optional(),
  subscription_event: subscriptionEventSchema.optional(),
  unsubscription_event: unsubscriptionEventSchema.optional(),
  renewal_event: renewalEventSchema.optional(),
  suspended_event: suspendedEventSchema.optional(),
  resumed_event: resumedEventSchema.optional(),
  next_execution_time: int64Schema.optional(),
  subscriber: subscriberSchema.optional(),
  product: productSchema.optional(),
  period_start_time: timestampSchema.optional(),
  period_end_time: timestampSchema.optional(),
  /** Required by the interface: which cycle of the subscription this event belongs to. */
  execution_phase: nonEmptyString,
});

/**
 * Longest notification id accepted. The id is the idempotency key, the Redis key and the BullMQ job
 * id; without a bound, ids past 16,383 characters (which V8 hashes by length only) flood the memory
 * store's hash table, and every copy in Redis costs as much as the id is long.
 */
export const MAX_NOTIFICATION_ID_LENGTH = 256;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A lone surrogate (`\ud800`) turns into U+FFFD when the id is encoded for Redis, so `x\ud800`,
 * `x\udbff` and `x\ufffd` would share one record: every id after the first would never be processed.
 */
export const notificationIdSchema = nonEmptyString
  .max(MAX_NOTIFICATION_ID_LENGTH)
  .refine((id) => !LONE_SURROGATE.test(id), "must be well-formed Unicode (no lone surrogates)")
  // PostgreSQL's text cannot hold U+0000: refused here, the id gets the same 400 whatever the store.
  .refine((id) => !id.includes("\u0000"), "must not contain a NUL character (U+0000)");

/** The id's refines, also run by the accept path's compiled check (`passesEnvelopeCheck`). */
export function isWellFormedNotificationId(id: string): boolean {
  return !LONE_SURROGATE.test(id) && !id.includes("\u0000");
}

/**
 * The envelope. `id` is the idempotency key and `event_type` selects the handler, so both are
 * required, as is the `resource` that carries the required `execution_phase`. `update_time` has no
 * rule in the envelope table, but it is the same time field as everywhere else, so it is a Timestamp.
 */
export const subscriptionNotificationSchema = openObject({
  id: notificationIdSchema,
  create_time: timestampSchema.optional(),
  update_time: timestampSchema.optional(),
  resource: subscriptionResourceSchema,
  summary: z.string().optional(),
  resource_type: z.string().optional(),
  resource_version: z.string().optional(),
  event_version: z.string().optional(),
  event_type: openEnum(EVENT_TYPES),
});

/**
 * The resource keys that hold an event object, in the order `eventObjectOf` looks for them. The
 * interface does not publish which object each event_type fills, so the lookup goes by presence.
 */
export const EVENT_OBJECT_KEYS = [
  "subscription_event",
  "renewal_event",
  "unsubscription_event",
  "suspended_event",
  "resumed_event",
] as const;
