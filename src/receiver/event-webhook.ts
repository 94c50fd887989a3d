import type { z } from "zod";
import type { Handler, SubscriptionHandlers } from "../dispatch/handlers.js";
import { notificationIdSchema } from "../schema/notification.js";
import type { ReceiverOptions } from "./options.js";

export interface EventWebhookOptions<S extends z.ZodType<{ id: string }>> extends Omit<ReceiverOptions, keyof SubscriptionHandlers | "event"> {
  /** The event's schema; its output's `id` is the idempotency key (checked like a notification id). */
  schema: S;
  /** Runs once per event id, as the subscription handlers do. */
  handler: Handler<z.output<S>>;
}

/**
 * Receiver options for an event other than the subscription notification, such as the order and
 * refund events (`orderEventSchema`, `refundEventSchema` from `merchant-webhooks/client`), validated by
 * a schema you give. Everything else is the receiver's: signature check, idempotency per `id`, the
 * answer and its status, logging. Pass the result to any adapter:
 * `app.post("/hooks/orders", subscriptionWebhook(eventWebhook({ schema: orderEventSchema, handler })))`.
 */
export function eventWebhook<S extends z.ZodType<{ id: string }>>(options: EventWebhookOptions<S>): ReceiverOptions {
  const { schema, handler, ...receiverOptions } = options;
  // A durable queue's worker validates and dispatches subscription notifications only.
  if (receiverOptions.queue?.durable) throw new TypeError("eventWebhook: a durable queue is not supported; use the in-process queue or none");
  const checked = schema.superRefine((event, ctx) => {
    const id = notificationIdSchema.safeParse(event.id);
    if (!id.success) for (const issue of id.error.issues) ctx.addIssue({ code: "custom", path: ["id"], message: issue.message });
  });
  return { ...receiverOptions, event: { schema: checked, handler: handler as Handler<never> } };
}
