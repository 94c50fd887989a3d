import { z } from "zod";
import { notificationIdSchema } from "../../schema/notification.js";
import { timestampSchema } from "../../schema/primitives.js";
import { queriedOrderSchema } from "./order.js";
import { refundOrderSchema } from "./refund.js";

// PROVISIONAL. The interface says order and refund events go to the request's webhook_url but does not
// publish their payloads. Until it does, the simulator sends, and these schemas accept, an envelope like
// the subscription notification's (`id`, `create_time`, `event_type`, `resource_type`) carrying the
// spec's own response model: `order` (as QueryOrder answers it) or `refund` (as RefundPayment answers it).

export const ORDER_EVENT_TYPE = "ORDER_UPDATED";
export const REFUND_EVENT_TYPE = "REFUND_UPDATED";

export const orderEventSchema = z.looseObject({
  id: notificationIdSchema,
  create_time: timestampSchema.optional(),
  event_type: z.string(),
  resource_type: z.string().optional(),
  order: queriedOrderSchema,
});

export const refundEventSchema = z.looseObject({
  id: notificationIdSchema,
  create_time: timestampSchema.optional(),
  event_type: z.string(),
  resource_type: z.string().optional(),
  refund: refundOrderSchema.extend({ origin_order_id: z.string().optional() }),
});
