import { z } from "zod";
import { ORDER_STATUSES } from "../../schema/enums.js";
import { freeMapSchema, nonEmptyString, openEnum, timestampSchema, uriSchema } from "../../schema/primitives.js";
import { amountWithBreakdownSchema, linkSchema, moneySchema, statusDetailSchema } from "../../schema/shared.js";
import { requestAmountSchema, requestMerchantIdSchema, requestMoneySchema } from "./request-shared.js";

export const REFUND_STATUSES = [
  "UNKNOWN",
  "REFUND_REJECTED",
  "REFUND_REVIEWING",
  "REFUND_REVIEW_REJECTED",
  "REFUNDING",
  "REFUNDED",
  "REFUND_FAILED",
] as const;

/** A refund unit as sent: the amount to refund is what makes it a unit. */
export const refundUnitRequestSchema = z.looseObject({
  origin_reference_id: z.string().optional(),
  reference_id: z.string().optional(),
  amount: requestMoneySchema,
  description: z.string().max(1000).optional(),
  refund_reference: z.string().optional(),
  amount_with_breakdown: requestAmountSchema.optional(),
});

/** RefundPayment's body. The origin order is named by its id or by the merchant's reference. */
export const refundRequestSchema = z.looseObject({
  origin_id: z
    .looseObject({ origin_order_id: z.string().min(1).optional(), origin_reference_id: z.string().min(1).optional() })
    .refine((origin) => origin.origin_order_id !== undefined || origin.origin_reference_id !== undefined, {
      message: "origin_order_id or origin_reference_id is required",
    }),
  reference_id: nonEmptyString,
  /** Empty for a full refund; the amounts for a partial one. */
  refund_units: z.array(refundUnitRequestSchema).default([]),
  refund_reason: z.string().max(128).optional(),
  webhook_url: uriSchema.optional(),
  merchant_id: requestMerchantIdSchema.optional(),
  metadata: freeMapSchema.optional(),
});

export const refundUnitSchema = z.looseObject({
  origin_reference_id: z.string().optional(),
  reference_id: z.string().optional(),
  amount: moneySchema.optional(),
  description: z.string().optional(),
  refund_reference: z.string().optional(),
  amount_with_breakdown: amountWithBreakdownSchema.optional(),
});

/** The answer to RefundPayment. */
export const refundOrderSchema = z.looseObject({
  create_time: timestampSchema.optional(),
  update_time: timestampSchema.optional(),
  id: z.string(),
  /** Deprecated by the interface in favour of refund_status. */
  status: openEnum(ORDER_STATUSES).optional(),
  refund_units: z.array(refundUnitSchema).optional(),
  refund_status: openEnum(REFUND_STATUSES).optional(),
  status_detail: statusDetailSchema.optional(),
  links: z.array(linkSchema).optional(),
  metadata: freeMapSchema.optional(),
});
