import { z } from "zod";
import { requestMerchantIdSchema } from "./request-shared.js";

/**
 * QueryOrder's body. The interface does not say which of `id` and `reference_id` is required or which
 * wins when both are sent, so exactly one is asked for.
 */
export const queryOrderRequestSchema = z.union([
  z.looseObject({
    id: z.string().min(1),
    reference_id: z.undefined().optional(),
    merchant_id: requestMerchantIdSchema.optional(),
  }),
  z.looseObject({
    reference_id: z.string().min(1),
    id: z.undefined().optional(),
    merchant_id: requestMerchantIdSchema.optional(),
  }),
]);
