import { z } from "zod";
import { SUBSCRIPTION_PLAN_TYPES } from "./enums.js";
import { paymentDetailSchema } from "./payment-detail.js";
import { openEnum, openObject, timestampSchema } from "./primitives.js";

// The five event objects a subscription resource may carry. Subscription and renewal events have the
// same fields today but stay separate schemas, so each can grow on its own as the platform adds fields.

export const subscriptionEventSchema = openObject({
  subscription_plan_type: openEnum(SUBSCRIPTION_PLAN_TYPES).optional(),
  payment_detail: paymentDetailSchema.optional(),
});

export const renewalEventSchema = openObject({
  subscription_plan_type: openEnum(SUBSCRIPTION_PLAN_TYPES).optional(),
  payment_detail: paymentDetailSchema.optional(),
});

export const unsubscriptionEventSchema = openObject({
  reason: z.string().optional(),
  unsubscription_time: timestampSchema.optional(),
});

export const suspendedEventSchema = openObject({
  reason: z.string().optional(),
  suspended_time: timestampSchema.optional(),
});

export const resumedEventSchema = openObject({
  resumed_time: timestampSchema.optional(),
});
