import { z } from "zod";
import { currencyCodeSchema, moneyValueSchema } from "../../schema/primitives.js";
import { breakdownSchema, purchaseUnitSchema } from "../../schema/shared.js";

// Pieces shared by the request schemas. A request is checked strictly where the interface states a
// rule (it is about to leave the merchant's hands); unknown fields still pass, so a field the platform
// adds later can be sent before this package knows it.

/** Money in a request: both the amount and its currency are needed for the platform to act on it. */
export const requestMoneySchema = z.looseObject({
  currency_code: currencyCodeSchema,
  value: moneyValueSchema,
});

export const requestAmountSchema = z.looseObject({
  currency_code: currencyCodeSchema,
  value: moneyValueSchema,
  breakdown: breakdownSchema.optional(),
});

/** A purchase unit as sent: the response-side unit (description <= 1000, payee id <= 64) with a required amount. */
export const requestPurchaseUnitSchema = purchaseUnitSchema.extend({ amount: requestAmountSchema });

/** merchant_id in a request body: when empty the platform uses the merchant of the signature. */
export const requestMerchantIdSchema = z.string().max(64);
