import { z } from "zod";
import {
  CHANNEL_CONTRACT_MODES,
  LINK_METHODS,
  LINK_RELS,
  MERCHANT_CONTRACT_MODES,
  TAX_CHECK_MODES,
  TAX_MODES,
  TAX_TYPES,
} from "./enums.js";
import {
  currencyCodeSchema,
  emailSchema,
  moneyValueSchema,
  nonEmptyString,
  openEnum,
  openObject,
  stringMapSchema,
  uriSchema,
} from "./primitives.js";

// Every object is loose: fields the platform adds later pass through to handlers untouched.

export const moneySchema = openObject({
  currency_code: currencyCodeSchema.optional(),
  value: moneyValueSchema.optional(),
});

export const addressSchema = openObject({
  /** Deprecated by the interface in favour of region_code; still accepted. */
  country: z.string().optional(),
  state_or_province: z.string().max(100).optional(),
  city: z.string().optional(),
  county: z.string().optional(),
  region_code: z.string().optional(),
  street: z.string().optional(),
  house_number_or_name: z.string().optional(),
  postal_code: z.string().max(100).optional(),
});

export const linkSchema = openObject({
  description: z.string().optional(),
  url: uriSchema.optional(),
});

export const linkV2Schema = openObject({
  rel: openEnum(LINK_RELS).optional(),
  /** URI-template formatted, so not necessarily a valid URL until expanded. */
  href: z.string().optional(),
  method: z.enum(LINK_METHODS).optional(),
});

/** One typed message of StatusDetail.details (proto3 `Any`): its own fields vary with `@type`. */
export const statusDetailItemSchema = openObject({
  "@type": z.string().optional(),
});

export const statusDetailSchema = openObject({
  name: z
    .string()
    .regex(/^[A-Z0-9_]+$/, "must be upper-case letters, digits and underscores")
    .optional(),
  message: z.string().optional(),
  details: z.array(statusDetailItemSchema).optional(),
});

export const cardInfoSchema = openObject({
  card_bin: z.string().optional(),
  card_hash: z.string().optional(),
  card_mask: z.string().optional(),
  expiry_month: z.string().optional(),
  expiry_year: z.string().optional(),
  cvc: z.string().optional(),
  funding_source: z.string().optional(),
  holder_name: z.string().optional(),
  card_issuing_country: z.string().optional(),
  card_brand: z.string().optional(),
  card_cooperation_brand: z.string().optional(),
  score: z.string().optional(),
  card_type: z.string().optional(),
  card_md5: z.string().optional(),
  card_pwd: z.string().optional(),
  selected_brand: z.string().optional(),
  card_contract_id: z.string().optional(),
});

export const taxSchema = openObject({
  tax_type: openEnum(TAX_TYPES).optional(),
  tax_name: nonEmptyString.optional(),
  /** A percentage written as a plain number, e.g. "8.5". */
  tax_rate: z
    .string()
    .regex(/^-?\d+(\.\d+)?$/, "must be a plain number")
    .optional(),
  tax_amount: moneySchema.optional(),
});

/**
 * The CHECKOUT_PAGE rule (tax fields required for other payment methods) concerns order requests;
 * a notification does not carry the payment method that rule depends on, so it is not applied here.
 */
export const breakdownSchema = openObject({
  tax_total: moneySchema.optional(),
  taxes: z.array(taxSchema).optional(),
  tax_reference: z.string().optional(),
  item_total: moneySchema.optional(),
  tax_check_mode: openEnum(TAX_CHECK_MODES).optional(),
  tax_mode: openEnum(TAX_MODES).optional(),
  discount_display: moneySchema.optional(),
  remaining_discount_display: moneySchema.optional(),
  before_discount_display: moneySchema.optional(),
});

export const amountWithBreakdownSchema = openObject({
  currency_code: currencyCodeSchema.optional(),
  value: moneyValueSchema.optional(),
  breakdown: breakdownSchema.optional(),
});

export const payeeSchema = openObject({
  merchant_id: nonEmptyString.max(64).optional(),
  email_address: emailSchema.optional(),
});

export const itemSchema = openObject({
  id: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
});

export const fxAmountSchema = openObject({
  after_fx_amount: moneySchema.optional(),
});

export const externalAmountSchema = openObject({
  discount_amount: moneySchema.optional(),
  discount_reference: nonEmptyString.optional(),
  fx_amount: fxAmountSchema.optional(),
});

export const purchaseUnitSchema = openObject({
  reference_id: z.string().optional(),
  amount: amountWithBreakdownSchema.optional(),
  payee: payeeSchema.optional(),
  description: z.string().max(1000).optional(),
  items: z.array(itemSchema).optional(),
  purchase_reference: z.string().optional(),
  capture_delay_hours: z.string().optional(),
  external_amount: externalAmountSchema.optional(),
  extend: stringMapSchema.optional(),
});

export const internalTransactionTraceInfoSchema = openObject({
  trace_id: z.string().optional(),
  channel_name: z.string().optional(),
  reference: z.string().optional(),
  ouid: z.string().optional(),
  merchant_ouid: z.string().optional(),
  channel_platform_ouid: z.string().optional(),
  merchant_platform_ouid: z.string().optional(),
  multi_ou_version: z.string().optional(),
});

export const internalMerchantAdditionDataSchema = openObject({
  channel_name: z.string().optional(),
  merchant_contract_mode: openEnum(MERCHANT_CONTRACT_MODES).optional(),
  channel_contract_mode: openEnum(CHANNEL_CONTRACT_MODES).optional(),
  channel_account_id: z.string().optional(),
  channel_real_channels: z.array(z.string()).optional(),
  channel_order_id: z.string().optional(),
  /** Typed `string` (not `ip`) by the interface here, unlike subscriber.ip. */
  payer_ip: z.string().optional(),
  payer_address: addressSchema.optional(),
  internal_transaction_trace_infos: z.array(internalTransactionTraceInfoSchema).optional(),
});

export const channelAdditionDataSchema = openObject({
  channel_name: z.string().optional(),
  channel_contract_mode: openEnum(CHANNEL_CONTRACT_MODES).optional(),
  channel_account_id: z.string().optional(),
  channel_real_channels: z.array(z.string()).optional(),
  channel_order_id: z.string().optional(),
});
