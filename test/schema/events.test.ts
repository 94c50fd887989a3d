import {
  renewalEventSchema,
  resumedEventSchema,
  subscriptionEventSchema,
  suspendedEventSchema,
  unsubscriptionEventSchema,
} from "merchant-webhooks/schema";
import { describe, it } from "vitest";
import type { z } from "zod";
import { expectInvalidAt, expectValid, type Path, withValue } from "./support.js";

const RULES: [rule: string, schema: z.ZodType, path: Path, good: unknown, bad: unknown][] = [
  [
    "subscription_event.subscription_plan_type is a string",
    subscriptionEventSchema,
    ["subscription_plan_type"],
    "PROMOTIONAL",
    1,
  ],
  [
    "subscription_event.payment_detail is a PaymentDetail",
    subscriptionEventSchema,
    ["payment_detail", "amount", "value"],
    "1",
    "one",
  ],
  [
    "renewal_event.subscription_plan_type is a string",
    renewalEventSchema,
    ["subscription_plan_type"],
    "REGULAR",
    false,
  ],
  [
    "renewal_event.payment_detail is a PaymentDetail",
    renewalEventSchema,
    ["payment_detail", "card_info", "cvc"],
    "123",
    123,
  ],
  ["unsubscription_event.reason is a string", unsubscriptionEventSchema, ["reason"], "user request", 1],
  [
    "unsubscription_event.unsubscription_time is RFC 3339",
    unsubscriptionEventSchema,
    ["unsubscription_time"],
    "2026-11-23T10:00:00Z",
    "soon",
  ],
  ["suspended_event.reason is a string", suspendedEventSchema, ["reason"], "payment failed", []],
  [
    "suspended_event.suspended_time is RFC 3339",
    suspendedEventSchema,
    ["suspended_time"],
    "2026-11-23T10:00:00+01:00",
    "2026/11/23",
  ],
  ["resumed_event.resumed_time is RFC 3339", resumedEventSchema, ["resumed_time"], "2026-11-23t10:00:00z", 1732300000],
];

describe("event object rules", () => {
  it.each(RULES)("%s: passes", (_rule, schema, path, good) => {
    expectValid(schema, withValue({}, path, good));
  });

  it.each(RULES)("%s: fails at that path", (_rule, schema, path, _good, bad) => {
    expectInvalidAt(schema, withValue({}, path, bad), path);
  });

  it.each([subscriptionEventSchema, renewalEventSchema])(
    "accepts an unlisted subscription_plan_type (%#)",
    (schema) => {
      expectValid(schema, { subscription_plan_type: "TRIAL" });
    },
  );
});
