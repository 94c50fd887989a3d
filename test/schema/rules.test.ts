import { eventObjectOf, subscriptionNotificationSchema } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { DETAIL, type Path, RENEW, RULES, setAt } from "./rule-cases.js";

function check(path: Path, value: unknown) {
  const body = notification();
  setAt(body, path, value);
  return subscriptionNotificationSchema.safeParse(body);
}

describe("notification schema rules", () => {
  it.each(RULES)("%s: passes", (_rule, path, good) => {
    const result = check(path, good);
    expect(result.error?.issues ?? []).toEqual([]);
  });

  it.each(RULES)("%s: fails at that path", (_rule, path, _good, bad) => {
    const result = check(path, bad);
    expect(result.success).toBe(false);
    // the issue is reported at the field, or inside it for maps and arrays
    const paths = result.error!.issues.map((issue) => issue.path.join("."));
    expect(
      paths.some((reported) => reported === path.join(".") || reported.startsWith(`${path.join(".")}.`)),
      paths.join(", "),
    ).toBe(true);
  });
});

describe("forward compatibility", () => {
  it("keeps unknown fields at every level", () => {
    const body = notification();
    body.new_envelope_field = { nested: true };
    body.resource.renewal_event.payment_detail.card_info.new_card_field = "x";
    const result = subscriptionNotificationSchema.parse(body);
    expect(result).toMatchObject({ new_envelope_field: { nested: true } });
    expect((result.resource.renewal_event?.payment_detail?.card_info as any)?.new_card_field).toBe("x");
  });

  it.each([
    [["event_type"], "SUBSCRIPTION_PAUSED"],
    [["resource", "subscription_status"], "ARCHIVED"],
    [["resource", "event_type"], "PAUSE"],
    [[...DETAIL, "payment_result"], "DO_NOT_HONOUR"],
    [[...DETAIL, "status"], "PARTIALLY_REFUNDED"],
    [[...RENEW, "subscription_plan_type"], "TRIAL"],
  ] as [Path, string][])("accepts a value the enumeration at %j does not list yet", (path, value) => {
    expect(check(path, value).success).toBe(true);
  });

  it("keeps LinkV2.method closed: the interface lists every HTTP method", async () => {
    const { linkV2Schema } = await import("merchant-webhooks/schema");
    expect(linkV2Schema.safeParse({ rel: "PAYMENT", method: "POST" }).success).toBe(true);
    expect(linkV2Schema.safeParse({ rel: "NEW_REL", method: "FETCH" }).error?.issues[0]?.path).toEqual(["method"]);
  });

  it("checks StatusDetail names and keeps typed details", async () => {
    const { statusDetailSchema } = await import("merchant-webhooks/schema");
    expect(
      statusDetailSchema.safeParse({ name: "CARD_DECLINED_2", details: [{ "@type": "t.Detail", extra: 1 }] }).success,
    ).toBe(true);
    expect(statusDetailSchema.safeParse({ name: "card-declined" }).success).toBe(false);
  });

  it("checks Link urls", async () => {
    const { linkSchema } = await import("merchant-webhooks/schema");
    expect(linkSchema.safeParse({ url: "https://pay.example/x" }).success).toBe(true);
    expect(linkSchema.safeParse({ url: "not a url" }).success).toBe(false);
  });
});

describe("eventObjectOf", () => {
  it("returns the renewal event of a renewal", () => {
    const parsed = subscriptionNotificationSchema.parse(notification());
    const found = eventObjectOf(parsed);
    expect(found?.kind).toBe("renewal_event");
    expect(found?.kind === "renewal_event" && found.event.payment_detail?.payment_result).toBe("SUCCESS");
  });

  it("returns the suspended event of a suspension, and nothing when none is present", () => {
    expect(eventObjectOf(subscriptionNotificationSchema.parse(notification("SUBSCRIPTION_SUSPENDED")))?.kind).toBe(
      "suspended_event",
    );
    const bare = notification("UNKNOWN");
    delete bare.resource.renewal_event;
    expect(eventObjectOf(subscriptionNotificationSchema.parse(bare))).toBeUndefined();
  });
});
