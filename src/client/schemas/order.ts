import { z } from "zod";
import { ORDER_STATUSES } from "../../schema/enums.js";
import { freeMapSchema, openEnum, stringMapSchema, timestampSchema } from "../../schema/primitives.js";
import {
  cardInfoSchema,
  channelAdditionDataSchema,
  internalMerchantAdditionDataSchema,
  linkSchema,
  linkV2Schema,
  moneySchema,
  purchaseUnitSchema,
  statusDetailSchema,
} from "../../schema/shared.js";

// Responses are read leniently, as the receiver reads notifications: objects are loose and enums open,
// so a field or status the platform adds later reaches the caller instead of failing the call.

/** The answer to CreateOrder. */
export const orderSchema = z.looseObject({
  create_time: timestampSchema.optional(),
  update_time: timestampSchema.optional(),
  id: z.string(),
  status: openEnum(ORDER_STATUSES).optional(),
  purchase_units: z.array(purchaseUnitSchema).optional(),
  /** Deprecated by the interface in favour of linksV2. */
  links: z.array(linkSchema).optional(),
  linksV2: z.array(linkV2Schema).optional(),
  metadata: stringMapSchema.optional(),
  internal_merchant_addition_data: internalMerchantAdditionDataSchema.optional(),
  channel_addition_datas: z.array(channelAdditionDataSchema).optional(),
});

const refundBalanceSchema = z.looseObject({
  balance_enough: z.boolean().optional(),
  refundable_balance: moneySchema.optional(),
  reference_id: z.string().optional(),
});

export const orderRefundStateSchema = z.looseObject({
  /** Whether the order can be refunded through RefundPayment. */
  refund_supported: z.boolean().optional(),
  order_refund_detail: refundBalanceSchema
    .extend({ sub_order_refund_details: z.array(refundBalanceSchema).optional() })
    .optional(),
});

/** The answer to QueryOrder: the order and the query-only fields. */
export const queriedOrderSchema = orderSchema.extend({
  payment_channel: z.string().optional(),
  card_info: cardInfoSchema.optional(),
  metadata: freeMapSchema.optional(),
  paid_amount: z.string().optional(),
  status_detail: statusDetailSchema.optional(),
  order_refund_state: orderRefundStateSchema.optional(),
  channel_name: z.string().optional(),
});
