import { createReceiver, defineHandlers, type KnownEventType, type SubscriptionHandlers } from "merchant-webhooks";
import { describe, expectTypeOf, it } from "vitest";

describe("handlers declared apart from the receiver call", () => {
  it("defineHandlers types each handler's notification and ctx, and refuses a misspelt key", () => {
    const handlers = defineHandlers({
      onRenew: (n, ctx) => {
        expectTypeOf(n.event_type).toEqualTypeOf<"SUBSCRIPTION_RENEW">();
        expectTypeOf(ctx.eventType).toEqualTypeOf<"SUBSCRIPTION_RENEW">();
      },
      onAny: (_n, ctx) => {
        expectTypeOf(ctx.eventType).toEqualTypeOf<KnownEventType | (string & {})>();
      },
    });
    createReceiver({ ...handlers });

    // @ts-expect-error onRenewal is not a handler
    defineHandlers({ onRenewal: () => {} });
  });

  it("satisfies SubscriptionHandlers does the same without a helper", () => {
    const handlers = {
      onCancel: (_n, ctx) => {
        expectTypeOf(ctx.eventType).toEqualTypeOf<"SUBSCRIPTION_CANCELLED">();
      },
    } satisfies SubscriptionHandlers;
    createReceiver(handlers);

    // @ts-expect-error onCancelled is not a handler
    const typo = { onCancelled: () => {} } satisfies SubscriptionHandlers;
    void typo;
  });

  it("ctx.eventType is the known types (open to new ones) where the type is not fixed", () => {
    createReceiver({
      onUnknown: (_n, ctx) => {
        expectTypeOf(ctx.eventType).toEqualTypeOf<KnownEventType | (string & {})>();
        expectTypeOf<"SUBSCRIPTION_RENEW">().toMatchTypeOf<typeof ctx.eventType>();
      },
    });
  });
});
