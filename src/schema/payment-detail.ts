import { z } from "zod";
import { ORDER_STATUSES, PAYMENT_RESULTS } from "./enums.js";
import { freeMapSchema, openEnum, openObject, stringMapSchema } from "./primitives.js";
import {
  cardInfoSchema,
  channelAdditionDataSchema,
  internalMerchantAdditionDataSchema,
  moneySchema,
  purchaseUnitSchema,
} from "./shared.js";

export const cardAdditionDataSchema = openObject({
  cvc_result: z.string().optional(),
  avs_result: z.string().optional(),
  liability_shift: z.boolean().optional(),
  threed_offered: z.boolean().optional(),
  threed_authenticated: z.boolean().optional(),
  refusal_reason_raw: z.string().optional(),
  merchant_advice_code: z.string().optional(),
});

export const paymentDetailSchema = openObject({
  /** The interface says more values exist than it lists. */
  payment_result: openEnum(PAYMENT_RESULTS).optional(),
  order_id: z.string().optional(),
  /** Order status; nine values beyond the listed ones exist in notifications. */
  status: openEnum(ORDER_STATUSES).optional(),
  purchase_units: z.array(purchaseUnitSchema).optional(),
  payment_channel: z.string().optional(),
  amount: moneySchema.optional(),
  payer_id: z.string().optional(),
  card_info: cardInfoSchema.optional(),
  card_addition_data: cardAdditionDataSchema.optional(),
  internal_merchant_addition_data: internalMerchantAdditionDataSchema.optional(),
  channel_addition_datas: z.array(channelAdditionDataSchema).optional(),
  /** "Free map" with no value type named, so values of any JSON type are kept. */
  metadata: freeMapSchema.optional(),
  /**
   * Echoes the create-order request's `metadata`, which the interface types as a free map of string
   * to string; a merchant that sent strings gets strings back, so that type is enforced here.
   */
  merchant_metadata: stringMapSchema.optional(),
});
