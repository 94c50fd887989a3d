import { z } from "zod";
import {
  emailSchema,
  ipSchema,
  moneyValueSchema,
  nonEmptyString,
  openEnum,
  stringMapSchema,
  timestampSchema,
  uriSchema,
} from "../../schema/primitives.js";
import { addressSchema, cardInfoSchema } from "../../schema/shared.js";
import { requestMerchantIdSchema, requestPurchaseUnitSchema } from "./request-shared.js";

/** The first payment_method.name values; the interface says many more exist without listing them. */
export const PAYMENT_METHOD_NAMES = ["UNKNOWN", "CHECKOUT_PAGE", "CREDIT_CARD"] as const;
export const COLOR_DEPTHS = [1, 4, 8, 15, 16, 24, 30, 32, 48] as const;

/** BCP 47 as the interface narrows it: language[-script][-region], region 2 letters or 3 digits. */
const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|\d{3}))?$/;

export const browserInfoSchema = z.looseObject({
  accept_header: z.string().optional(),
  color_depth: z.literal(COLOR_DEPTHS).optional(),
  java_enabled: z.boolean().optional(),
  javascript_enabled: z.boolean().optional(),
  language: z.string().optional(),
  screen_height: z.int32().optional(),
  screen_width: z.int32().optional(),
  time_zone_offset: z.int32().optional(),
  user_agent: z.string().optional(),
});

export const paymentInfoSchema = z.looseObject({
  chat_wallet_pay_payment_info: z
    .looseObject({
      contract_template_id: z.string().optional(),
      contract_session_id: z.string().optional(),
      mcc_code: z.string().optional(),
      contract_sign_expire_time: timestampSchema.optional(),
      code: z.string().optional(),
    })
    .optional(),
  checkout_page_payment_info: z
    .looseObject({ integrate_method: openEnum(["REDIRECT", "EMBED", "POPUP"] as const).optional() })
    .optional(),
  device_wallet_payment_info: z.looseObject({}).optional(),
  ewallet_card_payment_type: openEnum(["UNKNOWN", "NATIVE", "REDIRECT"] as const).optional(),
  card_info: cardInfoSchema.optional(),
  mpi_data: z.record(z.string(), z.string()).optional(),
});

export const applicationContextSchema = z.looseObject({
  payment_method: z
    .looseObject({
      name: openEnum(PAYMENT_METHOD_NAMES).optional(),
      checkout_payment_methods: z.array(openEnum(PAYMENT_METHOD_NAMES)).optional(),
    })
    .optional(),
  payment_info: paymentInfoSchema.optional(),
  return_url: uriSchema.optional(),
  cancel_url: uriSchema.optional(),
  webhook_url: uriSchema.optional(),
  skip_page_redirect_url: uriSchema.optional(),
  language_code: z.string().max(11).regex(LANGUAGE_TAG, "must be a BCP 47 tag: language[-script][-region]").optional(),
  region_code: z
    .string()
    .regex(/^[A-Z]{2}$/, "must be two upper-case letters (ISO 3166-1 alpha-2)")
    .optional(),
  browser_info: browserInfoSchema.optional(),
  result_page_auto_return_merchant: z.boolean().optional(),
  mcc: z
    .string()
    .regex(/^\d{4}$/, "must be four digits")
    .optional(),
  checkout_hide_order_info: z.boolean().optional(),
  client_type: openEnum(["UNKNOWN", "WEB", "H5", "APP"] as const).optional(),
});

export const payerSchema = z.looseObject({
  email_address: emailSchema.optional(),
  payer_id: nonEmptyString.optional(),
  name: z
    .looseObject({
      prefix: z.string().optional(),
      given_name: z.string().optional(),
      surname: z.string().optional(),
      middle_name: z.string().optional(),
      suffix: z.string().optional(),
      full_name: z.string().optional(),
    })
    .optional(),
  payer_ip: ipSchema.optional(),
  payer_interaction: openEnum(["Ecommerce", "ContAuth"] as const).optional(),
  payer_type: openEnum(["MERCHANT", "PLATFORM"] as const).optional(),
  payer_gender: openEnum(["UNKNOWN", "FEMALE", "MALE"] as const).optional(),
  payer_telephone_number: z
    .string()
    .regex(/^\+?\d{5,20}$/, "must be 5 to 20 digits with an optional leading +")
    .optional(),
  billing_address: addressSchema.optional(),
  payer_address: addressSchema.optional(),
  /** A letter, then 3 to 63 of letters, digits, underscore, space, parentheses, hyphen (4 to 64 in all). */
  payer_statement: z
    .string()
    .regex(
      /^[A-Za-z][A-Za-z0-9_ ()-]{3,63}$/,
      "must be 4 to 64 characters: a letter, then letters, digits, _, space, (, ), -",
    )
    .optional(),
  payer_login_id: z.string().optional(),
  platform_login_id: z.string().optional(),
  platform_login_id_type: z.string().optional(),
  platform_login_id_country: z.string().optional(),
  platform_login_id_reg_time: z.string().optional(),
  additional_payment_info: z.string().optional(),
  anonymous: z.boolean().optional(),
});

export const splitSchema = z.looseObject({
  amount_value: moneyValueSchema,
  merchant_id: nonEmptyString,
  split_reference: nonEmptyString,
});

const createOrderRequestFields = z.looseObject({
  reference_id: nonEmptyString,
  purchase_units: z.array(requestPurchaseUnitSchema).min(1),
  payer: payerSchema.optional(),
  splits: z.array(splitSchema).optional(),
  merchant_id: requestMerchantIdSchema.optional(),
  promotion: z.looseObject({ token: nonEmptyString }).optional(),
  contract_query_merchant_id_list: z.array(z.string()).optional(),
  metadata: stringMapSchema.optional(),
  application_context: applicationContextSchema.optional(),
});

/**
 * AmountWithBreakdown rules 2 and 3: with a payment method other than CHECKOUT_PAGE, each unit's
 * breakdown needs tax_check_mode, tax_total and taxes. Without a named method nothing is required,
 * since the interface does not say which method applies then.
 */
function requireTaxesOutsideCheckoutPage(order: z.output<typeof createOrderRequestFields>, ctx: z.RefinementCtx): void {
  const method = order.application_context?.payment_method?.name;
  if (method === undefined || method === "CHECKOUT_PAGE") return;
  order.purchase_units.forEach((unit, index) => {
    for (const field of ["tax_check_mode", "tax_total", "taxes"] as const) {
      if (unit.amount.breakdown?.[field] === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["purchase_units", index, "amount", "breakdown", field],
          message: `required when the payment method is not CHECKOUT_PAGE`,
        });
      }
    }
  });
}

/**
 * CreateOrder's body. Whether the application-context fields sit in `application_context` or at the top
 * level is not published; this package sends them in `application_context`, the object the interface names.
 */
export const createOrderRequestSchema = createOrderRequestFields.superRefine(requireTaxesOutsideCheckoutPage);
