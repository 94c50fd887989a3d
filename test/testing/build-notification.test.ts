import {
  createReceiver,
  eventObjectOf,
  redactNotification,
  type SubscriptionHandlers,
  subscriptionNotificationSchema,
} from "merchant-webhooks";
import {
  cardInfoSchema,
  EVENT_TYPES,
  moneySchema,
  paymentDetailSchema,
  purchaseUnitSchema,
  subscriberSchema,
} from "merchant-webhooks/schema";
import {
  buildCardInfo,
  buildMoney,
  buildNotification,
  buildPaymentDetail,
  buildPurchaseUnit,
  buildSubscriber,
} from "merchant-webhooks/testing";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";

const PAIRING = {
  SUBSCRIPTION_CREATED: {
    handler: "onCreated",
    object: "subscription_event",
    resourceType: "SUBSCRIPTION",
    paid: true,
  },
  SUBSCRIPTION_RENEW: { handler: "onRenew", object: "renewal_event", resourceType: "RENEWAL", paid: true },
  SUBSCRIPTION_CANCELLED: {
    handler: "onCancel",
    object: "unsubscription_event",
    resourceType: "UNSUBSCRIPTION",
    paid: false,
  },
  SUBSCRIPTION_SUSPENDED: { handler: "onSuspend", object: "suspended_event", resourceType: "SUSPENDED", paid: false },
  SUBSCRIPTION_RESUMED: { handler: "onResume", object: "resumed_event", resourceType: "RESUMED", paid: false },
  UNKNOWN: { handler: "onUnknown", object: undefined, resourceType: "UNKNOWN", paid: false },
} as const;

const HANDLER_KEYS = ["onCreated", "onRenew", "onCancel", "onSuspend", "onResume", "onUnknown"] as const;

function spiedHandlers() {
  return Object.fromEntries(HANDLER_KEYS.map((key) => [key, vi.fn()])) as Record<
    (typeof HANDLER_KEYS)[number],
    ReturnType<typeof vi.fn>
  >;
}

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("buildNotification", () => {
  it("covers every event_type the schema lists", () => {
    expect(Object.keys(PAIRING).sort()).toEqual([...EVENT_TYPES].sort());
  });

  describe.each(Object.entries(PAIRING))("%s", (eventType, expected) => {
    it("passes the notification schema unchanged, with the event object that fits", () => {
      const built = buildNotification(eventType);
      const parsed = subscriptionNotificationSchema.safeParse(built);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      expect(parsed.data).toEqual(built);
      expect(built.event_type).toBe(eventType);
      expect(built.resource.event_type).toBe(expected.resourceType);
      expect(eventObjectOf(built)?.kind).toBe(expected.object);
      const event = eventObjectOf(built)?.event as { payment_detail?: unknown } | undefined;
      expect(event?.payment_detail !== undefined).toBe(expected.paid);
    });

    it("reaches its handler, and only that one, through a receiver", async () => {
      const handlers = spiedHandlers();
      const receiver = createReceiver({ ...(handlers as SubscriptionHandlers), logger: silentLogger() });
      const built = buildNotification(eventType);
      const response = await receiver.handle({
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: encode(built),
      });
      expect(response.status).toBe(200);
      expect(response.answer).toEqual({ processed: true, message: "processed" });
      for (const key of HANDLER_KEYS) expect(handlers[key]).toHaveBeenCalledTimes(key === expected.handler ? 1 : 0);
      expect(handlers[expected.handler].mock.calls[0]![0]).toEqual(built);
      await receiver.close();
    });
  });

  it("builds an event_type this version does not know, for onUnknown", async () => {
    const onUnknown = vi.fn();
    const receiver = createReceiver({ onUnknown, logger: silentLogger() });
    const built = buildNotification("SUBSCRIPTION_PAUSED");
    expect(subscriptionNotificationSchema.safeParse(built).success).toBe(true);
    await receiver.handle({ method: "POST", headers: {}, rawBody: encode(built) });
    expect(onUnknown).toHaveBeenCalledTimes(1);
    expect(onUnknown.mock.calls[0]![0].event_type).toBe("SUBSCRIPTION_PAUSED");
  });

  it("gives the same notification for the same arguments", () => {
    expect(buildNotification("SUBSCRIPTION_RENEW")).toEqual(buildNotification("SUBSCRIPTION_RENEW"));
    expect(buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: 7 })).toEqual(
      buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: 7 }),
    );
  });

  it("gives other ids for another seed, and fresh ids when asked for random ones", () => {
    const ids = new Set([
      buildNotification("SUBSCRIPTION_RENEW").id,
      buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: 1 }).id,
      buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: 2 }).id,
      buildNotification("SUBSCRIPTION_RENEW", undefined, { random: true }).id,
      buildNotification("SUBSCRIPTION_RENEW", undefined, { random: true }).id,
    ]);
    expect(ids.size).toBe(5);
    const random = buildNotification("SUBSCRIPTION_CREATED", undefined, { random: true });
    expect(random.resource.subscription_event?.payment_detail?.order_id).not.toBe(
      buildNotification("SUBSCRIPTION_CREATED").resource.subscription_event?.payment_detail?.order_id,
    );
  });

  it("dates every time field from `at`", () => {
    const built = buildNotification("SUBSCRIPTION_SUSPENDED", undefined, { at: "2030-01-02T03:04:05Z" });
    expect(built.create_time).toBe("2030-01-02T03:04:05Z");
    expect(built.resource.suspended_event?.suspended_time).toBe("2030-01-02T03:04:05Z");
    expect(built.resource.period_end_time).toBe("2030-02-01T03:04:05Z");
  });

  it("merges overrides at any depth, keeping the fields beside them", () => {
    const built = buildNotification("SUBSCRIPTION_RENEW", {
      id: "WH-custom",
      resource: {
        renewal_event: { payment_detail: { payment_result: "CARD_DECLINED", amount: { value: "5.00" } } },
        subscriber: { email: "a@b.co" },
      },
    });
    const detail = built.resource.renewal_event!.payment_detail!;
    expect(built.id).toBe("WH-custom");
    expect(detail.payment_result).toBe("CARD_DECLINED");
    expect(detail.amount).toEqual({ currency_code: "EUR", value: "5.00" });
    expect(detail.card_info?.card_mask).toBe("411111******1111");
    expect(built.resource.subscriber).toMatchObject({ email: "a@b.co", name: "Ada Example" });
    expect(subscriptionNotificationSchema.safeParse(built).success).toBe(true);
  });

  it("replaces arrays whole and removes fields set to undefined", () => {
    const built = buildNotification("SUBSCRIPTION_RENEW", {
      resource: {
        execution_phase: undefined,
        renewal_event: { payment_detail: { purchase_units: [{ reference_id: "only" }] } },
      },
    });
    expect(built.resource.renewal_event?.payment_detail?.purchase_units).toEqual([{ reference_id: "only" }]);
    expect("execution_phase" in built.resource).toBe(false);
    const parsed = subscriptionNotificationSchema.safeParse(built);
    expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toEqual(["resource.execution_phase"]);
  });

  it.each(["__proto__", "constructor", "prototype"])("refuses an override with a %s key", (key) => {
    const overrides = JSON.parse(`{"resource": {"subscriber": {"${key}": {"polluted": true}}}}`);
    expect(() => buildNotification("SUBSCRIPTION_RENEW", overrides)).toThrow(`refusing the key "${key}"`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("builders of the shared types", () => {
  it.each([
    ["buildMoney", buildMoney, moneySchema],
    ["buildCardInfo", buildCardInfo, cardInfoSchema],
    ["buildPurchaseUnit", buildPurchaseUnit, purchaseUnitSchema],
    ["buildPaymentDetail", buildPaymentDetail, paymentDetailSchema],
    ["buildSubscriber", buildSubscriber, subscriberSchema],
  ] as const)("%s passes its schema", (_name, build, schema) => {
    expect(schema.safeParse(build()).success).toBe(true);
  });

  it("builds card data with a masked number and no verification code, nothing a redaction would change", () => {
    const card = buildCardInfo();
    expect(card.cvc).toBeUndefined();
    expect(card.card_mask).toMatch(/^\d{6}\*+\d{4}$/);
    expect(redactNotification(buildPaymentDetail(), { pii: false })).toEqual(buildPaymentDetail());
  });

  it("applies overrides to a builder's value", () => {
    expect(buildMoney({ currency_code: "JPY", value: "1200" })).toEqual({ currency_code: "JPY", value: "1200" });
    expect(buildPurchaseUnit({ amount: { value: "1.00" } }).amount?.breakdown?.tax_check_mode).toBe("TOTAL_AMOUNT");
  });
});
