import { createPaymentClient, type QueriedOrder } from "merchant-webhooks/client";
import { confirmRenewal } from "merchant-webhooks/reconcile";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { buildNotification, buildProduct, buildSubscriber } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it } from "vitest";
import { startWebhook } from "../cli/run-cli.js";

describe("confirmRenewal: a renewal's order is asked of the platform before its handler runs", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0)) await close();
  });

  it("runs the handler for a renewal whose paid order QueryOrder finds, and refuses one naming an unknown order", async () => {
    const confirmed: QueriedOrder[] = [];
    // The webhook is up before the simulator that sends to it, so the client is made once the simulator listens.
    let platform: ReturnType<typeof createPaymentClient> | undefined;
    const client = {
      queryOrder: (lookup: { id: string }, options?: { merchant_id?: string }) => platform!.queryOrder(lookup, options),
    };
    const hook = await startWebhook({
      onCreated: async () => {},
      onRenew: confirmRenewal(client, async (_notification, ctx) => {
        confirmed.push(ctx.confirmedOrder);
        expect(ctx.attempt).toBe(1);
      }),
    });
    cleanup.push(hook.close);
    const sim = createPlatformSimulator({ webhookUrl: hook.url, timeScale: 0.001, retrySchedule: [0] });
    cleanup.push(() => sim.close());
    platform = createPaymentClient({ baseUrl: await sim.listen(0) });

    const subscription = await sim.subscriptions.create({
      merchant_id: "M-CONFIRM",
      subscriber: buildSubscriber(),
      product: buildProduct(),
    });
    const renewal = await subscription.renew();
    await sim.settled();
    const orderId = renewal.resource.renewal_event!.payment_detail!.order_id!;
    expect(confirmed.map((order) => [order.id, order.status])).toEqual([[orderId, "COMPLETED"]]);

    // A renewal naming an order the platform never charged (forged, or a platform bug): not trusted.
    const forged = buildNotification(
      "SUBSCRIPTION_RENEW",
      { resource: { renewal_event: { payment_detail: { order_id: "ORD-NOBODY-CHARGED" } } } },
      { random: true },
    );
    const answer = await fetch(hook.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(forged),
    });
    expect(answer.status).toBe(500);
    expect(((await answer.json()) as { processed: boolean }).processed).toBe(false);
    expect(confirmed).toHaveLength(1);
  });
});
