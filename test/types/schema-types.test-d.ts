import {
  type PaymentDetail,
  type RenewalEvent,
  type SubscriptionNotification,
  type SubscriptionResource,
  subscriptionNotificationSchema,
} from "merchant-webhooks";
import type { CardInfo } from "merchant-webhooks/schema";
import { describe, expectTypeOf, it } from "vitest";

declare const notification: SubscriptionNotification;

describe("the inferred notification types", () => {
  it("list only the known fields, so a misspelled field does not compile", () => {
    // @ts-expect-error a typo of subscription_status
    void notification.resource.subscription_stauts;
    // @ts-expect-error a typo of payment_result
    void notification.resource.renewal_event?.payment_detail?.paymnt_result;
    // @ts-expect-error not a field of the envelope
    void notification.not_a_field;
    // @ts-expect-error a typo inside a shared type
    void notification.resource.renewal_event?.payment_detail?.card_info?.card_brnad;
  });

  it("type the known fields precisely", () => {
    expectTypeOf(notification.id).toEqualTypeOf<string>();
    expectTypeOf(notification.resource.execution_phase).toEqualTypeOf<string>();
    expectTypeOf(notification.resource.id).toEqualTypeOf<string | undefined>();
    expectTypeOf(notification.resource.renewal_event).toEqualTypeOf<RenewalEvent | undefined>();
    expectTypeOf<RenewalEvent["payment_detail"]>().toEqualTypeOf<PaymentDetail | undefined>();
    expectTypeOf<PaymentDetail["card_info"]>().toEqualTypeOf<CardInfo | undefined>();
    expectTypeOf<PaymentDetail["payment_result"]>().toExtend<string | undefined>();
    expectTypeOf<"CARD_DECLINED">().toExtend<NonNullable<PaymentDetail["payment_result"]>>();
  });

  it("have no index signature at any level, but keep the free maps open", () => {
    expectTypeOf<string extends keyof SubscriptionNotification ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<string extends keyof SubscriptionResource ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<string extends keyof PaymentDetail ? true : false>().toEqualTypeOf<false>();
    expectTypeOf<string extends keyof CardInfo ? true : false>().toEqualTypeOf<false>();
    // The interface calls these free maps: any key is right there.
    expectTypeOf<NonNullable<PaymentDetail["metadata"]>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<NonNullable<PaymentDetail["merchant_metadata"]>>().toEqualTypeOf<Record<string, string>>();
  });

  it("are what the exported schema parses to", () => {
    expectTypeOf(subscriptionNotificationSchema.parse({})).toEqualTypeOf<SubscriptionNotification>();
  });
});
