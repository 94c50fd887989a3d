import { cardAdditionDataSchema, paymentDetailSchema } from "merchant-webhooks/schema";
import { describe, expect, it } from "vitest";
import { expectInvalidAt, expectValid, fixture, type Path, withValue } from "./support.js";

const detail = () => fixture().resource.renewal_event.payment_detail as Record<string, any>;

const RULES: [rule: string, path: Path, good: unknown, bad: unknown][] = [
  ["payment_result is a string", ["payment_result"], "CARD_DECLINED", 1],
  ["status is a string", ["status"], "REFUNDED", null],
  ["order_id is a string", ["order_id"], "ORD-1", 1],
  ["amount is Money", ["amount", "currency_code"], "JPY", "yen"],
  ["purchase_units is an array", ["purchase_units"], [], {}],
  ["purchase_units[] are PurchaseUnits", ["purchase_units", 0, "payee", "merchant_id"], "M1", ""],
  ["card_info fields are strings", ["card_info", "card_bin"], "411111", 411111],
  ["card_addition_data.liability_shift is a boolean", ["card_addition_data", "liability_shift"], false, "yes"],
  ["card_addition_data.threed_offered is a boolean", ["card_addition_data", "threed_offered"], true, 1],
  [
    "card_addition_data.threed_authenticated is a boolean",
    ["card_addition_data", "threed_authenticated"],
    false,
    "false",
  ],
  [
    "card_addition_data.refusal_reason_raw is a string",
    ["card_addition_data", "refusal_reason_raw"],
    "05 Do not honour",
    5,
  ],
  [
    "internal_merchant_addition_data.payer_address is an Address",
    ["internal_merchant_addition_data", "payer_address", "state_or_province"],
    "BE",
    "s".repeat(101),
  ],
  ["channel_addition_datas is an array", ["channel_addition_datas"], [{ channel_name: "x" }], { channel_name: "x" }],
  ["metadata is an object", ["metadata"], { seats: 3 }, "plan=pro"],
  ["merchant_metadata maps strings to strings", ["merchant_metadata", "seats"], "3", 3],
];

describe("payment_detail rules", () => {
  it.each(RULES)("%s: passes", (_rule, path, good) => {
    expectValid(paymentDetailSchema, withValue(detail(), path, good));
  });

  it.each(RULES)("%s: fails at that path", (_rule, path, _good, bad) => {
    expectInvalidAt(paymentDetailSchema, withValue(detail(), path, bad), path);
  });
});

describe("payment_detail forward compatibility", () => {
  it.each([
    [["payment_result"], "NEW_VALUE"],
    [["status"], "PARTIALLY_REFUNDED"],
  ] as [Path, string][])("accepts an unlisted value at %j", (path, value) => {
    expect(expectValid(paymentDetailSchema, withValue(detail(), path, value))).toMatchObject({ [path[0]!]: value });
  });

  it("keeps metadata values of any JSON type (a free map)", () => {
    const metadata = { seats: 3, trial: false, tags: ["a"] };
    expect(expectValid(paymentDetailSchema, { metadata }).metadata).toEqual(metadata);
  });

  it("keeps unknown fields of card_addition_data", () => {
    expect(expectValid(cardAdditionDataSchema, { eci: "05" })).toEqual({ eci: "05" });
  });

  it("accepts an empty payment_detail", () => {
    expectValid(paymentDetailSchema, {});
  });
});
