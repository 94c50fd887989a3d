import * as root from "merchant-webhooks";
import * as schema from "merchant-webhooks/schema";
import * as testing from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";

// The root is what a merchant writes a receiver with; everything else has a subpath of its own. Every
// value the root exports is a name to learn and to keep once 0.1.0 is published, so the list is short.
const MAX_ROOT_VALUES = 30;

describe("the package's root entry", () => {
  it(`exports at most ${MAX_ROOT_VALUES} values`, () => {
    const values = Object.keys(root);
    expect(values.length).toBeLessThanOrEqual(MAX_ROOT_VALUES);
  });

  it("keeps what a merchant writes with", () => {
    for (const name of [
      "createReceiver",
      "parseNotification",
      "NotificationError",
      "hmacVerifier",
      "standardWebhooksVerifier",
      "memoryStore",
      "subscriptionNotificationSchema",
      "closeOnSignals",
      "StoreUnavailableError",
      "HandlerTimeoutError",
    ]) {
      expect(root, name).toHaveProperty(name);
    }
  });

  it("no longer re-exports the other schemas: they are in merchant-webhooks/schema", () => {
    expect(root).not.toHaveProperty("moneySchema");
    expect(root).not.toHaveProperty("EVENT_TYPES");
    expect(root).not.toHaveProperty("signHmac");
  });
});

describe("merchant-webhooks/schema", () => {
  it("holds every schema, the enumerations and the notification helpers", () => {
    expect(schema.subscriptionNotificationSchema).toBe(root.subscriptionNotificationSchema);
    expect(schema.EVENT_TYPES).toContain("SUBSCRIPTION_RENEW");
    expect(schema.eventTypeOf({ event_type: "SUBSCRIPTION_CANCELLED" })).toBe("SUBSCRIPTION_CANCELLED");
    expect(schema.moneySchema.safeParse({ currency_code: "EUR", value: "9.99" }).success).toBe(true);
    expect(schema.moneySchema.safeParse({ currency_code: "euro", value: "9.99" }).success).toBe(false);
  });

  it("validates a notification built by the testing kit, and its types follow the schema", () => {
    const notification: schema.SubscriptionNotification = schema.subscriptionNotificationSchema.parse(
      testing.buildNotification("SUBSCRIPTION_RENEW"),
    );
    const money: schema.Money | undefined = notification.resource.renewal_event?.payment_detail?.amount;
    expect(notification.event_type).toBe("SUBSCRIPTION_RENEW");
    expect(money === undefined || typeof money.value === "string").toBe(true);
  });
});

describe("merchant-webhooks/testing", () => {
  it("holds the signing and recording helpers the root no longer exports", () => {
    expect(typeof testing.signHmac).toBe("function");
    expect(typeof testing.redactForRecording).toBe("function");
    expect(testing.REDACTED_EMAIL).toEqual(expect.any(String));
  });
});
