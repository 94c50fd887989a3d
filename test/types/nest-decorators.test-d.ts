import type { EventObjectFor } from "merchant-webhooks";
import { type HandlerContext, type NotificationOf, OnAny, OnCancel, OnError, OnRenew } from "merchant-webhooks/nest";
import { describe, it } from "vitest";

// The decorators type a method as defineHandlers types the handler of the same key: a method whose
// notification or ctx is another event's does not compile.
describe("the Nest handler decorators", () => {
  it("accept a method typed as the event's handler, and refuse another event's", () => {
    class Handlers {
      @OnRenew()
      renew(_n: NotificationOf<"SUBSCRIPTION_RENEW">, _ctx: HandlerContext<EventObjectFor<"SUBSCRIPTION_RENEW">>) {}

      @OnCancel()
      async cancel(_n: NotificationOf<"SUBSCRIPTION_CANCELLED">) {}

      // @ts-expect-error a cancellation's notification is not a renewal's
      @OnRenew()
      wrongEvent(_n: NotificationOf<"SUBSCRIPTION_CANCELLED">) {}

      // @ts-expect-error a handler returns nothing (or a promise of nothing) to wait on, not a value
      @OnRenew()
      returnsValue(_n: NotificationOf<"SUBSCRIPTION_RENEW">): string {
        return "";
      }

      @OnAny()
      any(_n: NotificationOf<string>) {}

      @OnError()
      failed(_err: unknown) {}
    }
    void Handlers;
  });
});
