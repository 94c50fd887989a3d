import {
  addressSchema,
  amountWithBreakdownSchema,
  cardInfoSchema,
  channelAdditionDataSchema,
  internalMerchantAdditionDataSchema,
  linkSchema,
  linkV2Schema,
  moneySchema,
  purchaseUnitSchema,
  statusDetailSchema,
  taxSchema,
} from "merchant-webhooks/schema";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { expectInvalidAt, expectValid, type Path, withValue } from "./support.js";

type Rule = [rule: string, schema: z.ZodType, path: Path, good: unknown, bad: unknown];

const money = { currency_code: "EUR", value: "1.00" };

/** Every rule the interface states for the shared types, as a value that passes and one that fails. */
const RULES: Rule[] = [
  ["Money.currency_code is three upper-case letters", moneySchema, ["currency_code"], "JPY", "jpy"],
  ["Money.value matches the interface pattern", moneySchema, ["value"], "-.5", "1,00"],
  [
    "Address.state_or_province is at most 100 characters",
    addressSchema,
    ["state_or_province"],
    "s".repeat(100),
    "s".repeat(101),
  ],
  ["Address.postal_code is at most 100 characters", addressSchema, ["postal_code"], "p".repeat(100), "p".repeat(101)],
  ["Address.country (deprecated) is still a string", addressSchema, ["country"], "DE", 49],
  ["Link.url is a URI", linkSchema, ["url"], "https://pay.example/x", "not a url"],
  ["LinkV2.method is one of the listed HTTP methods", linkV2Schema, ["method"], "PATCH", "FETCH"],
  ["LinkV2.method is upper case", linkV2Schema, ["method"], "GET", "get"],
  [
    "LinkV2.href is a string (a URI template, not checked as a URL)",
    linkV2Schema,
    ["href"],
    "https://pay.example/{id}",
    1,
  ],
  ["StatusDetail.name is A-Z, 0-9 and underscore", statusDetailSchema, ["name"], "CARD_DECLINED_2", "card-declined"],
  ["StatusDetail.name is not empty", statusDetailSchema, ["name"], "E", ""],
  ["StatusDetail.details is an array", statusDetailSchema, ["details"], [], { "@type": "x" }],
  ["StatusDetail.details[].@type is a string", statusDetailSchema, ["details", 0, "@type"], "type.example/Detail", 7],
  ["CardInfo fields are strings", cardInfoSchema, ["expiry_month"], "09", 9],
  ["CardInfo.cvc is a string", cardInfoSchema, ["cvc"], "123", 123],
  ["CardInfo.score is a string", cardInfoSchema, ["score"], "10", 10],
  ["Tax.tax_name is non-empty", taxSchema, ["tax_name"], "VAT", ""],
  ["Tax.tax_rate is a plain number", taxSchema, ["tax_rate"], "8.5", "8.5%"],
  ["Tax.tax_amount is Money", taxSchema, ["tax_amount", "value"], "3.19", "3,19"],
  ["AmountWithBreakdown.currency_code is as Money", amountWithBreakdownSchema, ["currency_code"], "EUR", "EURO"],
  ["AmountWithBreakdown.value is as Money", amountWithBreakdownSchema, ["value"], "19.99", "19.99 EUR"],
  ["breakdown.tax_total is Money", amountWithBreakdownSchema, ["breakdown", "tax_total", "currency_code"], "EUR", "E"],
  ["breakdown.item_total is Money", amountWithBreakdownSchema, ["breakdown", "item_total", "value"], "16.80", "16.8.0"],
  [
    "breakdown.discount_display is Money",
    amountWithBreakdownSchema,
    ["breakdown", "discount_display", "value"],
    "1",
    "one",
  ],
  [
    "breakdown.remaining_discount_display is Money",
    amountWithBreakdownSchema,
    ["breakdown", "remaining_discount_display", "value"],
    "1",
    "x",
  ],
  [
    "breakdown.before_discount_display is Money",
    amountWithBreakdownSchema,
    ["breakdown", "before_discount_display", "value"],
    "1",
    "x",
  ],
  ["breakdown.taxes are Tax", amountWithBreakdownSchema, ["breakdown", "taxes", 0, "tax_name"], "VAT", ""],
  ["breakdown.tax_reference is a string", amountWithBreakdownSchema, ["breakdown", "tax_reference"], "T-1", 1],
  ["payee.merchant_id is non-empty", purchaseUnitSchema, ["payee", "merchant_id"], "M1", ""],
  [
    "payee.merchant_id is at most 64 characters",
    purchaseUnitSchema,
    ["payee", "merchant_id"],
    "m".repeat(64),
    "m".repeat(65),
  ],
  ["payee.email_address is an email", purchaseUnitSchema, ["payee", "email_address"], "pay@merchant.example", "pay@"],
  [
    "PurchaseUnit.description is at most 1000 characters",
    purchaseUnitSchema,
    ["description"],
    "d".repeat(1000),
    "d".repeat(1001),
  ],
  ["PurchaseUnit.amount is an AmountWithBreakdown", purchaseUnitSchema, ["amount", "value"], "5", "5 EUR"],
  ["PurchaseUnit.items[] fields are strings", purchaseUnitSchema, ["items", 0, "name"], "Pro plan", 1],
  ["PurchaseUnit.items is an array", purchaseUnitSchema, ["items"], [{ id: "1" }], { id: "1" }],
  [
    "external_amount.discount_amount is Money",
    purchaseUnitSchema,
    ["external_amount", "discount_amount", "value"],
    "2",
    "2%",
  ],
  [
    "external_amount.discount_reference is non-empty",
    purchaseUnitSchema,
    ["external_amount", "discount_reference"],
    "PROMO",
    "",
  ],
  [
    "external_amount.fx_amount.after_fx_amount is Money",
    purchaseUnitSchema,
    ["external_amount", "fx_amount", "after_fx_amount", "currency_code"],
    "USD",
    "US",
  ],
  ["PurchaseUnit.extend maps strings to strings", purchaseUnitSchema, ["extend", "seats"], "3", 3],
  [
    "InternalMerchantAdditionData.payer_address is an Address",
    internalMerchantAdditionDataSchema,
    ["payer_address", "postal_code"],
    "1",
    "p".repeat(101),
  ],
  [
    "InternalMerchantAdditionData.channel_real_channels are strings",
    internalMerchantAdditionDataSchema,
    ["channel_real_channels", 0],
    "VISA",
    1,
  ],
  [
    "internal_transaction_trace_infos[] fields are strings",
    internalMerchantAdditionDataSchema,
    ["internal_transaction_trace_infos", 0, "multi_ou_version"],
    "2",
    2,
  ],
  [
    "ChannelAdditionData.channel_real_channels are strings",
    channelAdditionDataSchema,
    ["channel_real_channels", 0],
    "x",
    null,
  ],
  ["ChannelAdditionData.channel_order_id is a string", channelAdditionDataSchema, ["channel_order_id"], "C-1", 1],
];

describe("shared type rules", () => {
  it.each(RULES)("%s: passes", (_rule, schema, path, good) => {
    expectValid(schema, withValue({}, path, good));
  });

  it.each(RULES)("%s: fails at that path", (_rule, schema, path, _good, bad) => {
    expectInvalidAt(schema, withValue({}, path, bad), path);
  });
});

describe("every field is optional", () => {
  it.each([
    moneySchema,
    addressSchema,
    linkSchema,
    linkV2Schema,
    statusDetailSchema,
    cardInfoSchema,
    taxSchema,
    amountWithBreakdownSchema,
    purchaseUnitSchema,
    internalMerchantAdditionDataSchema,
    channelAdditionDataSchema,
  ])("accepts {} (%#)", (schema) => {
    expectValid(schema, {});
  });
});

describe("forward compatibility", () => {
  it("keeps unknown fields, nested ones included", () => {
    const unit = { amount: { ...money, breakdown: { future_total: money } }, brand_new: { a: 1 } };
    expect(expectValid(purchaseUnitSchema, unit)).toEqual(unit);
  });

  it("keeps the fields of typed StatusDetail details", () => {
    const detail = { name: "CARD_DECLINED", details: [{ "@type": "type.example/Retry", retry_after: "5s" }] };
    expect(expectValid(statusDetailSchema, detail)).toEqual(detail);
  });

  it.each([
    [linkV2Schema, ["rel"], "NEW_REL"],
    [taxSchema, ["tax_type"], "VAT_2030"],
    [amountWithBreakdownSchema, ["breakdown", "tax_check_mode"], "LINE_AMOUNT"],
    [amountWithBreakdownSchema, ["breakdown", "tax_mode"], "TAX_HYBRID"],
    [internalMerchantAdditionDataSchema, ["merchant_contract_mode"], "PARTIAL_CONTRACT"],
    [internalMerchantAdditionDataSchema, ["channel_contract_mode"], "MIX_CONTRACT"],
    [channelAdditionDataSchema, ["channel_contract_mode"], "NEW_MODE"],
  ] as [z.ZodType, Path, string][])("accepts an unlisted enumeration value at %#", (schema, path, value) => {
    expectValid(schema, withValue({}, path, value));
  });

  it("still requires enumeration values to be strings", () => {
    expectInvalidAt(linkV2Schema, { rel: 1 }, ["rel"]);
  });
});
