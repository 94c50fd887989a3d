import type { z } from "zod";
import { HANDLER_KEYS, type Handler, type SubscriptionHandlers } from "../dispatch/handlers.js";
import { notificationIdSchema } from "../schema/notification.js";
import { optionError } from "../shared/errors.js";
import { rejectUnknownKeys } from "../shared/option-keys.js";
import { RECEIVER_OPTION_KEYS, type ReceiverOptions } from "./options.js";

const EVENT_HANDLER_KEYS = new Set<string>([...Object.values(HANDLER_KEYS), "onUnknown"]);

export interface EventReceiverOptions<S extends z.ZodType<{ id: string }>>
  extends Omit<ReceiverOptions, keyof SubscriptionHandlers | "eventSchema"> {
  /** The event's schema; its output's `id` is the idempotency key (checked like a notification id). */
  schema: S;
  /** Runs once per event id, as the subscription handlers do. */
  handler: Handler<z.output<S>>;
}

/**
 * The receiver options (handed to any adapter's `subscriptionWebhook`, or to `createReceiver`) for an
 * event other than the subscription notification, such as the order and
 * refund events (`orderEventSchema`, `refundEventSchema` from `merchant-webhooks/client`), validated by
 * a schema you give. Everything else is the receiver's: signature check, idempotency per `id`, the
 * answer and its status, logging. Pass the result to any adapter:
 * `app.all("/hooks/orders", subscriptionWebhook(eventReceiverOptions({ schema: orderEventSchema, handler })))`.
 */
export function eventReceiverOptions<S extends z.ZodType<{ id: string }>>(
  options: EventReceiverOptions<S>,
): ReceiverOptions {
  rejectUnknownKeys("eventReceiverOptions", options, [
    "schema",
    "handler",
    ...RECEIVER_OPTION_KEYS.filter((key) => !EVENT_HANDLER_KEYS.has(key) && key !== "eventSchema"),
  ]);
  const { schema, handler, ...receiverOptions } = options;
  // A durable queue's worker validates and dispatches subscription notifications only.
  if (receiverOptions.queue?.durable)
    throw optionError(
      new TypeError("eventReceiverOptions: a durable queue is not supported; use the in-process queue or none"),
      "MW_INVALID_OPTION",
      "queue",
    );
  const checked = schema.superRefine((event, ctx) => {
    const id = notificationIdSchema.safeParse(event.id);
    if (!id.success)
      for (const issue of id.error.issues) ctx.addIssue({ code: "custom", path: ["id"], message: issue.message });
  });
  // Every handler key gets the one handler, so whatever the event_type, the event reaches it.
  const everyEventType = Object.fromEntries(
    [...new Set(Object.values(HANDLER_KEYS)), "onUnknown"].map((key) => [key, handler]),
  ) as SubscriptionHandlers;
  return { ...receiverOptions, ...everyEventType, eventSchema: checked };
}
