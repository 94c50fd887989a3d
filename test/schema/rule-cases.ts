/** The interface's field rules as cases, shared by the schema tests and the compiled check's differential test. */
import { notification } from "../support/notifications.js";

export type Path = (string | number)[];

export function setAt(target: any, path: Path, value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) node = node[key] ??= typeof key === "number" ? [] : {};
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

export const RENEW = ["resource", "renewal_event"];
export const DETAIL = [...RENEW, "payment_detail"];
const UNIT = [...DETAIL, "purchase_units", 0];
const BREAKDOWN = [...UNIT, "amount", "breakdown"];

/** Every rule the interface states, as [field path, a value that passes, a value that fails]. */
export const RULES: [string, Path, unknown, unknown][] = [
  ["envelope id is required and non-empty", ["id"], "WH-1", ""],
  ["envelope id is a string", ["id"], "WH-2", 42],
  ["event_type is required", ["event_type"], "SUBSCRIPTION_RENEW", undefined],
  ["resource is required", ["resource"], notification().resource, undefined],
  ["envelope create_time is RFC 3339", ["create_time"], "2026-11-23t08:15:30z", "2026-11-23 08:15:30"],
  ["envelope update_time is RFC 3339", ["update_time"], "2026-11-23T08:15:30.5+05:30", "2026-13-01T00:00:00Z"],
  ["timestamps need a zone", ["resource", "create_time"], "2026-11-23T08:15:30-07:00", "2026-11-23T08:15:30"],
  ["timestamps have valid hours", ["resource", "update_time"], "2026-11-23T23:59:59Z", "2026-11-23T24:00:00Z"],
  ["execution_phase is required", ["resource", "execution_phase"], "1", undefined],
  ["execution_phase is non-empty", ["resource", "execution_phase"], "2", ""],
  ["resource.merchant_id is non-empty", ["resource", "merchant_id"], "M1", ""],
  ["resource.sub_merchant_id is non-empty", ["resource", "sub_merchant_id"], "SM1", ""],
  ["resource.id is non-empty", ["resource", "id"], "SUB-1", ""],
  ["next_execution_time accepts an int64 number", ["resource", "next_execution_time"], 1732300000000, 1.5],
  ["next_execution_time accepts an int64 string", ["resource", "next_execution_time"], "1732300000000", "12a"],
  ["period_start_time is RFC 3339", ["resource", "period_start_time"], "2026-11-23T00:00:00Z", "yesterday"],
  ["period_end_time is RFC 3339", ["resource", "period_end_time"], "2026-12-23T00:00:00.123456Z", "2026-12-23"],
  ["subscriber.id is non-empty", ["resource", "subscriber", "id"], "C1", ""],
  ["subscriber.id is at most 64 characters", ["resource", "subscriber", "id"], "c".repeat(64), "c".repeat(65)],
  ["subscriber.email is an email", ["resource", "subscriber", "email"], "a.b@example.co", "not-an-email"],
  ["subscriber.ip is an IPv4 address", ["resource", "subscriber", "ip"], "198.51.100.4", "300.1.1.1"],
  ["subscriber.ip is an IPv6 address", ["resource", "subscriber", "ip"], "2001:db8::1", "2001:db8::zz"],
  [
    "address.state_or_province is at most 100 characters",
    ["resource", "subscriber", "address", "state_or_province"],
    "s".repeat(100),
    "s".repeat(101),
  ],
  [
    "address.postal_code is at most 100 characters",
    ["resource", "subscriber", "address", "postal_code"],
    "10115",
    "p".repeat(101),
  ],
  ["product.id is non-empty", ["resource", "product", "id"], "P1", ""],
  [
    "unsubscription_time is RFC 3339",
    ["resource", "unsubscription_event", "unsubscription_time"],
    "2026-11-23T00:00:00Z",
    "soon",
  ],
  [
    "suspended_time is RFC 3339",
    ["resource", "suspended_event", "suspended_time"],
    "2026-11-23T00:00:00Z",
    "2026/11/23",
  ],
  ["resumed_time is RFC 3339", ["resource", "resumed_event", "resumed_time"], "2026-11-23T00:00:00Z", 1732300000],
  ["Money.value matches the pattern (decimal)", [...DETAIL, "amount", "value"], "-.5", "1,00"],
  ["Money.value matches the pattern (integer)", [...DETAIL, "amount", "value"], "-100", "1e3"],
  ["Money.currency_code is three letters", [...DETAIL, "amount", "currency_code"], "JPY", "EURO"],
  ["AmountWithBreakdown.value matches Money", [...UNIT, "amount", "value"], "19.99", "19.99 EUR"],
  ["AmountWithBreakdown.currency_code is three letters", [...UNIT, "amount", "currency_code"], "EUR", "eu"],
  ["breakdown.tax_total is Money", [...BREAKDOWN, "tax_total", "value"], "3.19", "three"],
  ["Tax.tax_name is non-empty", [...BREAKDOWN, "taxes", 0, "tax_name"], "VAT", ""],
  ["Tax.tax_rate is a plain number", [...BREAKDOWN, "taxes", 0, "tax_rate"], "8.5", "8.5%"],
  ["Tax.tax_amount is Money", [...BREAKDOWN, "taxes", 0, "tax_amount", "currency_code"], "EUR", "E"],
  ["payee.merchant_id is non-empty", [...UNIT, "payee", "merchant_id"], "M1", ""],
  ["payee.merchant_id is at most 64 characters", [...UNIT, "payee", "merchant_id"], "m".repeat(64), "m".repeat(65)],
  ["payee.email_address is an email", [...UNIT, "payee", "email_address"], "pay@merchant.example", "pay@"],
  ["PurchaseUnit.description is at most 1000 characters", [...UNIT, "description"], "d".repeat(1000), "d".repeat(1001)],
  ["external_amount.discount_reference is non-empty", [...UNIT, "external_amount", "discount_reference"], "PROMO", ""],
  [
    "external_amount.fx_amount.after_fx_amount is Money",
    [...UNIT, "external_amount", "fx_amount", "after_fx_amount", "value"],
    "1.00",
    "1.0.0",
  ],
  ["PurchaseUnit.extend maps strings to strings", [...UNIT, "extend"], { a: "b" }, { a: 1 }],
  ["card_info fields are strings", [...DETAIL, "card_info", "expiry_month"], "09", 9],
  [
    "card_addition_data.liability_shift is a boolean",
    [...DETAIL, "card_addition_data", "liability_shift"],
    false,
    "yes",
  ],
  [
    "internal_merchant_addition_data.payer_address is an Address",
    [...DETAIL, "internal_merchant_addition_data", "payer_address", "postal_code"],
    "1",
    "p".repeat(101),
  ],
  [
    "internal_merchant_addition_data.channel_real_channels are strings",
    [...DETAIL, "internal_merchant_addition_data", "channel_real_channels"],
    ["a"],
    [1],
  ],
  [
    "channel_addition_datas is an array of objects",
    [...DETAIL, "channel_addition_datas"],
    [{ channel_name: "x" }],
    { channel_name: "x" },
  ],
  ["purchase_units is an array", [...DETAIL, "purchase_units"], [], {}],
];
