import { createPaymentClient, type PaymentClient, type QueriedOrder } from "merchant-webhooks/client";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { buildProduct, buildSubscriber } from "merchant-webhooks/testing";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { startWebhook } from "../cli/run-cli.js";
import { laterBaseUrl } from "./support.js";

describe("ctx.platform: the platform client the receiver was given, in every handler", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0)) await close();
  });

  it("a renewal's handler asks QueryOrder for the order it names; without the option there is no client", async () => {
    const asked: QueriedOrder[] = [];
    const without: unknown[] = [];
    // The client points at the simulator, which starts once the webhook it sends to is up.
    const later = laterBaseUrl();
    const platform = createPaymentClient({
      baseUrl: later.baseUrl,
      fetch: later.fetch,
    });
    const hook = await startWebhook({
      platform,
      onCreated: async () => {},
      onRenew: async (notification, ctx) => {
        expectTypeOf(ctx.platform).toEqualTypeOf<PaymentClient>();
        const orderId = ctx.event?.payment_detail?.order_id;
        asked.push(
          await ctx.platform.queryOrder({ id: orderId! }, { merchant_id: notification.resource.merchant_id! }),
        );
      },
    });
    const plain = await startWebhook({ onRenew: async (_notification, ctx) => void without.push(ctx.platform) });
    cleanup.push(hook.close, plain.close);
    const sim = createPlatformSimulator({ webhookUrl: hook.url, timeScale: 0.001, retrySchedule: [0] });
    cleanup.push(() => sim.close());
    later.to(await sim.listen(0));

    const subscription = await sim.subscriptions.create({
      merchant_id: "M-PLATFORM",
      subscriber: buildSubscriber(),
      product: buildProduct(),
    });
    const renewal = await subscription.renew();
    await sim.settled();
    const orderId = renewal.resource.renewal_event!.payment_detail!.order_id!;
    expect(asked.map((order) => [order.id, order.status])).toEqual([[orderId, "COMPLETED"]]);

    const answer = await fetch(plain.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(renewal),
    });
    expect(answer.status).toBe(200);
    expect(without).toEqual([undefined]);
  });
});
