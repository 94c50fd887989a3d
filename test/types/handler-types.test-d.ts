import type {
  AnyEventObject,
  HandlerContext,
  RenewalEvent,
  ResumedEvent,
  SubscriptionEvent,
  SubscriptionNotification,
  SuspendedEvent,
  UnsubscriptionEvent,
} from "merchant-webhooks";
import { createReceiver } from "merchant-webhooks";
import { createWorker } from "merchant-webhooks/bullmq";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { describe, expectTypeOf, it } from "vitest";

describe("handler types", () => {
  it("narrow each handler's notification to its event_type", () => {
    subscriptionWebhook({
      onCreated: (n) => {
        expectTypeOf(n.event_type).toEqualTypeOf<"SUBSCRIPTION_CREATED">();
      },
      onRenew: (n) => {
        expectTypeOf(n.event_type).toEqualTypeOf<"SUBSCRIPTION_RENEW">();
      },
      onCancel: (n) => {
        expectTypeOf(n.event_type).toEqualTypeOf<"SUBSCRIPTION_CANCELLED">();
      },
      onSuspend: (n) => {
        expectTypeOf(n.event_type).toEqualTypeOf<"SUBSCRIPTION_SUSPENDED">();
      },
      onResume: (n) => {
        expectTypeOf(n.event_type).toEqualTypeOf<"SUBSCRIPTION_RESUMED">();
      },
      onUnknown: (n) => {
        expectTypeOf(n).toEqualTypeOf<SubscriptionNotification>();
      },
    });
  });

  it("give each handler its event object as ctx.event, possibly absent", () => {
    subscriptionWebhook({
      onCreated: (_n, ctx) => {
        expectTypeOf(ctx.event).toEqualTypeOf<SubscriptionEvent | undefined>();
      },
      onRenew: (_n, ctx) => {
        expectTypeOf(ctx.event).toEqualTypeOf<RenewalEvent | undefined>();
        expectTypeOf(ctx.event?.payment_detail?.payment_result).toExtend<string | undefined>();
      },
      onCancel: (_n, ctx) => {
        expectTypeOf(ctx.event).toEqualTypeOf<UnsubscriptionEvent | undefined>();
      },
      onSuspend: (_n, ctx) => {
        expectTypeOf(ctx.event).toEqualTypeOf<SuspendedEvent | undefined>();
      },
      onResume: (_n, ctx) => {
        expectTypeOf(ctx.event).toEqualTypeOf<ResumedEvent | undefined>();
      },
      onUnknown: (_n, ctx) => {
        expectTypeOf(ctx.event).toEqualTypeOf<AnyEventObject | undefined>();
      },
    });
  });

  it("type the hooks: onAny for every notification, onError with the error", () => {
    createReceiver({
      onAny: (n, ctx) => {
        expectTypeOf(n).toEqualTypeOf<SubscriptionNotification>();
        expectTypeOf(ctx).toEqualTypeOf<HandlerContext>();
      },
      onError: (err, n, ctx) => {
        expectTypeOf(err).toEqualTypeOf<unknown>();
        expectTypeOf(n).toEqualTypeOf<SubscriptionNotification>();
        expectTypeOf(ctx.attempt).toEqualTypeOf<number>();
      },
    });
  });

  it("refuse typos in handler keys, ctx fields and event object fields", () => {
    // @ts-expect-error onRenewal is not a handler
    subscriptionWebhook({ onRenewal: () => {} });
    subscriptionWebhook({
      onRenew: (n, ctx) => {
        // @ts-expect-error attempts is not a ctx field
        void ctx.attempts;
        // @ts-expect-error the renewal event has no unsubscription_time
        void ctx.event?.unsubscription_time;
        // @ts-expect-error a typo of payment_detail
        void ctx.event?.payment_detial;
        // @ts-expect-error event_type is "SUBSCRIPTION_RENEW" here
        if (n.event_type === "SUBSCRIPTION_CANCELLED") return;
      },
    });
  });

  it("type a queue worker's handlers the same way", () => {
    createWorker({
      connection: "redis://127.0.0.1:6379",
      name: "q",
      onRenew: (_n, ctx) => {
        expectTypeOf(ctx.event).toEqualTypeOf<RenewalEvent | undefined>();
      },
    });
  });
});
