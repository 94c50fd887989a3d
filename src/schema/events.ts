import { z } from "zod";
import { SUBSCRIPTION_PLAN_TYPES } from "./enums.js";
import { openEnum, timestampSchema } from "./primitives.js";
import { paymentDetailSchema } from "./payment-detail.js";

export const subscriptionEventSchema = z.looseObject({
  subscription_plan_type: openEnum(SUBSCRIPTION_PLAN_TYPES).optional(),
  payment_detail: paymentDetailSchema.optional(),
});

export const renewalEventSchema = z.looseObject({
  subscription_plan_type: openEnum(SUBSCRIPTION_PLAN_TYPES).optional(),
  payment_detail: paymentDetailSchema.optional(),
});

export const unsubscriptionEventSchema = z.looseObject({
  reason: z.string().optional(),
  unsubscription_time: timestampSchema.optional(),
});

export const suspendedEventSchema = z.looseObject({
  reason: z.string().optional(),
  suspended_time: timestampSchema.optional(),
});

export const resumedEventSchema = z.looseObject({
  resumed_time: timestampSchema.optional(),
});
