import {
  EVENT_OBJECT_KEYS,
  EVENT_TYPES,
  type EventType,
  eventObjectOf,
  eventTypeOf,
  type KnownEventType,
  type RenewalEvent,
  type SubscriptionNotification,
  subscriptionNotificationSchema,
  subscriptionResourceSchema,
} from "merchant-webhooks/schema";
import { describe, expect, expectTypeOf, it } from "vitest";
import { expectInvalidAt, expectValid, fixture, type Path, withValue } from "./support.js";

const parse = (body: unknown) => subscriptionNotificationSchema.parse(body);

/** Every rule of the envelope and the resource, as [path, a value that passes, a value that fails]. */
const RULES: [rule: string, path: Path, good: unknown, bad: unknown][] = [
  ["id is required", ["id"], "WH-1", undefined],
  ["id is non-empty", ["id"], "W", ""],
  ["id is a string", ["id"], "WH-2", 42],
  ["event_type is required", ["event_type"], "SUBSCRIPTION_CANCELLED", undefined],
  ["event_type is a string", ["event_type"], "UNKNOWN", 2],
  ["resource is required", ["resource"], fixture().resource, undefined],
  ["resource is an object", ["resource"], fixture().resource, "SUB-1"],
  ["create_time is RFC 3339", ["create_time"], "2026-11-23t08:15:30z", "2026-11-23 08:15:30"],
  ["update_time is RFC 3339", ["update_time"], "2026-11-23T08:15:30.5+05:30", "2026-13-01T00:00:00Z"],
  ["summary is a string", ["summary"], "Renewed", 1],
  ["resource_version is a string", ["resource_version"], "2.0", 2],
  ["event_version is a string", ["event_version"], "1.0", 1],
  ["resource.execution_phase is required", ["resource", "execution_phase"], "1", undefined],
  ["resource.execution_phase is non-empty", ["resource", "execution_phase"], "2", ""],
  ["resource.execution_phase is a string", ["resource", "execution_phase"], "3", 3],
  ["resource.create_time is RFC 3339", ["resource", "create_time"], "2026-11-23T08:15:30-07:00", "2026-11-23T08:15:30"],
  ["resource.update_time is RFC 3339", ["resource", "update_time"], "2026-11-23T23:59:59Z", "2026-11-23T24:00:00Z"],
  ["resource.merchant_id is non-empty", ["resource", "merchant_id"], "M1", ""],
  ["resource.sub_merchant_id is non-empty", ["resource", "sub_merchant_id"], "SM1", ""],
  ["resource.id is non-empty", ["resource", "id"], "SUB-1", ""],
  ["resource.reference_id is a string", ["resource", "reference_id"], "", 481],
  ["resource.subscription_status is a string", ["resource", "subscription_status"], "CANCELLED", 1],
  ["resource.event_type is a string", ["resource", "event_type"], "RESUMED", 1],
  ["next_execution_time accepts an int64 number", ["resource", "next_execution_time"], 1732300000000, 1.5],
  ["next_execution_time accepts an int64 string", ["resource", "next_execution_time"], "1732300000000", "12a"],
  ["period_start_time is RFC 3339", ["resource", "period_start_time"], "2026-11-23T00:00:00Z", "yesterday"],
  ["period_end_time is RFC 3339", ["resource", "period_end_time"], "2026-12-23T00:00:00.123456Z", "2026-12-23"],
  ["subscriber.id is non-empty", ["resource", "subscriber", "id"], "C", ""],
  ["subscriber.id is at most 64 characters", ["resource", "subscriber", "id"], "c".repeat(64), "c".repeat(65)],
  ["subscriber.email is an email", ["resource", "subscriber", "email"], "a.b@example.co", "not-an-email"],
  ["subscriber.ip is an IP address (v4)", ["resource", "subscriber", "ip"], "198.51.100.4", "300.1.1.1"],
  ["subscriber.ip is an IP address (v6)", ["resource", "subscriber", "ip"], "2001:db8::1", "2001:db8::zz"],
  ["subscriber.name is a string", ["resource", "subscriber", "name"], "Ada", { first: "Ada" }],
  ["subscriber.phone_number is a string", ["resource", "subscriber", "phone_number"], "+49151", 49151],
  ["subscriber.address is an Address", ["resource", "subscriber", "address", "postal_code"], "10115", "p".repeat(101)],
  ["product.id is non-empty", ["resource", "product", "id"], "P1", ""],
  ["product.name is a string", ["resource", "product", "name"], "Pro", 1],
  [
    "renewal_event.payment_detail is checked",
    ["resource", "renewal_event", "payment_detail", "amount", "currency_code"],
    "EUR",
    "euro",
  ],
  [
    "unsubscription_event.unsubscription_time is RFC 3339",
    ["resource", "unsubscription_event", "unsubscription_time"],
    "2026-11-23T00:00:00Z",
    "soon",
  ],
  [
    "suspended_event.suspended_time is RFC 3339",
    ["resource", "suspended_event", "suspended_time"],
    "2026-11-23T00:00:00Z",
    "2026/11/23",
  ],
  [
    "resumed_event.resumed_time is RFC 3339",
    ["resource", "resumed_event", "resumed_time"],
    "2026-11-23T00:00:00Z",
    1732300000,
  ],
  [
    "subscription_event.subscription_plan_type is a string",
    ["resource", "subscription_event", "subscription_plan_type"],
    "REGULAR",
    0,
  ],
];

describe("subscriptionNotificationSchema", () => {
  it("accepts the renewal fixture unchanged", () => {
    const body = fixture();
    expect(expectValid(subscriptionNotificationSchema, body)).toEqual(body);
  });

  it.each(RULES)("%s: passes", (_rule, path, good) => {
    expectValid(subscriptionNotificationSchema, withValue(fixture(), path, good));
  });

  it.each(RULES)("%s: fails at that path", (_rule, path, _good, bad) => {
    expectInvalidAt(subscriptionNotificationSchema, withValue(fixture(), path, bad), path);
  });

  it("reports a deep failure with its full path", () => {
    const body = withValue(fixture(), ["resource", "subscriber", "email"], "ada@");
    const issues = subscriptionNotificationSchema.safeParse(body).error!.issues;
    expect(issues.map((issue) => issue.path)).toEqual([["resource", "subscriber", "email"]]);
  });

  it("accepts a notification with only the required fields", () => {
    expectValid(subscriptionNotificationSchema, {
      id: "WH-1",
      event_type: "UNKNOWN",
      resource: { execution_phase: "1" },
    });
  });

  it("rejects a body that is not an object", () => {
    expectInvalidAt(subscriptionNotificationSchema, [fixture()], []);
    expectInvalidAt(subscriptionNotificationSchema, null, []);
  });

  it("keeps int64 values as received", () => {
    expect(parse(fixture()).resource.next_execution_time).toBe(1798013712000);
    const asString = withValue(fixture(), ["resource", "next_execution_time"], "1798013712000");
    expect(parse(asString).resource.next_execution_time).toBe("1798013712000");
  });
});

describe("forward compatibility", () => {
  it("keeps unknown fields at every level", () => {
    const body = fixture();
    body.delivery_attempt = 3;
    body.resource.trial = { days: 14 };
    body.resource.subscriber.locale = "de-DE";
    body.resource.renewal_event.payment_detail.card_info.network_token = "tok";
    body.resource.renewal_event.payment_detail.purchase_units[0].amount.breakdown.shipping = {
      currency_code: "EUR",
      value: "0",
    };
    const out = parse(body);
    expect(out).toEqual(body);
    // Kept at run time, though the type lists only known fields: reading one needs a cast.
    expect((out as Record<string, unknown>).delivery_attempt).toBe(3);
  });

  it.each([
    [["event_type"], "SUBSCRIPTION_PAUSED"],
    [["resource", "subscription_status"], "ARCHIVED"],
    [["resource", "event_type"], "PAUSE"],
    [["resource", "renewal_event", "subscription_plan_type"], "TRIAL"],
    [["resource", "renewal_event", "payment_detail", "payment_result"], "NEW_VALUE"],
    [["resource", "renewal_event", "payment_detail", "status"], "PARTIALLY_REFUNDED"],
  ] as [Path, string][])("accepts the unlisted value at %j", (path, value) => {
    const out = expectValid(subscriptionNotificationSchema, withValue(fixture(), path, value));
    expect(path.reduce<any>((node, key) => node[key], out)).toBe(value);
  });
});

describe("subscriptionResourceSchema", () => {
  it("requires execution_phase on its own too", () => {
    expectValid(subscriptionResourceSchema, { execution_phase: "1" });
    expectInvalidAt(subscriptionResourceSchema, {}, ["execution_phase"]);
  });
});

describe("eventObjectOf", () => {
  it("returns the renewal event of the renewal fixture", () => {
    const notification = parse(fixture());
    const found = eventObjectOf(notification);
    expect(found?.kind).toBe("renewal_event");
    if (found?.kind !== "renewal_event") throw new Error("expected a renewal event");
    expectTypeOf(found.event).toEqualTypeOf<RenewalEvent>();
    expect(found.event.payment_detail?.payment_result).toBe("SUCCESS");
    expect(found.event).toBe(notification.resource.renewal_event);
  });

  it.each([
    ["subscription_event", { subscription_plan_type: "REGULAR" }],
    ["unsubscription_event", { reason: "user request" }],
    ["suspended_event", { suspended_time: "2026-11-23T10:00:00Z" }],
    ["resumed_event", { resumed_time: "2026-11-23T10:00:00Z" }],
  ])("returns a %s", (kind, event) => {
    const body = fixture();
    delete body.resource.renewal_event;
    body.resource[kind] = event;
    expect(eventObjectOf(parse(body))).toEqual({ kind, event });
  });

  it("takes the first present key in EVENT_OBJECT_KEYS order when several are filled", () => {
    const body = fixture();
    body.resource.resumed_event = { resumed_time: "2026-11-23T10:00:00Z" };
    body.resource.subscription_event = { subscription_plan_type: "PROMOTIONAL" };
    expect(eventObjectOf(parse(body))?.kind).toBe("subscription_event");
    expect(EVENT_OBJECT_KEYS).toEqual([
      "subscription_event",
      "renewal_event",
      "unsubscription_event",
      "suspended_event",
      "resumed_event",
    ]);
  });

  it("returns undefined when the resource carries no event object", () => {
    const body = fixture();
    delete body.resource.renewal_event;
    expect(eventObjectOf(parse(body))).toBeUndefined();
  });
});

describe("event types", () => {
  it("lists the interface's event types", () => {
    expect(EVENT_TYPES).toEqual([
      "UNKNOWN",
      "SUBSCRIPTION_CREATED",
      "SUBSCRIPTION_RENEW",
      "SUBSCRIPTION_CANCELLED",
      "SUBSCRIPTION_SUSPENDED",
      "SUBSCRIPTION_RESUMED",
    ]);
  });

  it("eventTypeOf returns a known event_type as is and maps others to UNKNOWN", () => {
    expect(eventTypeOf(parse(fixture()))).toBe("SUBSCRIPTION_RENEW");
    expect(eventTypeOf({ event_type: "SUBSCRIPTION_PAUSED" })).toBe("UNKNOWN");
    // an inherited property name is not a known event type
    expect(eventTypeOf({ event_type: "toString" })).toBe("UNKNOWN");
  });

  it("types event_type as the known union plus any string", () => {
    expectTypeOf<SubscriptionNotification["event_type"]>().toEqualTypeOf<EventType>();
    expectTypeOf<KnownEventType>().toEqualTypeOf<(typeof EVENT_TYPES)[number]>();
    expectTypeOf<"SUBSCRIPTION_PAUSED">().toExtend<EventType>();
    expectTypeOf<KnownEventType>().toExtend<EventType>();
    expectTypeOf(eventTypeOf).returns.toEqualTypeOf<KnownEventType>();
  });
});
