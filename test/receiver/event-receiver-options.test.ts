import { eventReceiverOptions, memoryStore, standardWebhooksVerifier } from "merchant-webhooks";
import {
  createPaymentClient,
  type OrderEvent,
  orderEventSchema,
  type RefundEvent,
  refundEventSchema,
} from "merchant-webhooks/client";
import { subscriptionWebhook } from "merchant-webhooks/fetch";
import { createPlatformSimulator, type PlatformSimulator } from "merchant-webhooks/simulator";
import { afterEach, describe, expect, it } from "vitest";
import { startWebhook } from "../cli/run-cli.js";
import { orderRequest } from "../client/fixtures.js";
import { silentLogger } from "../support/capture-logger.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("eventReceiverOptions: the receiver's core for order and refund events", () => {
  let sim: PlatformSimulator | undefined;
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await sim?.close();
    for (const close of cleanup.splice(0)) await close();
  });

  it("receives the simulator's signed order and refund events once each, duplicates and all", async () => {
    const orders: OrderEvent[] = [];
    const refunds: RefundEvent[] = [];
    const orderHook = await startWebhook(
      eventReceiverOptions({
        schema: orderEventSchema,
        verify: standardWebhooksVerifier(SECRET),
        handler: async (event) => void orders.push(event),
      }),
    );
    const refundHook = await startWebhook(
      eventReceiverOptions({
        schema: refundEventSchema,
        verify: standardWebhooksVerifier(SECRET),
        handler: async (event) => void refunds.push(event),
      }),
    );
    cleanup.push(orderHook.close, refundHook.close);
    sim = createPlatformSimulator({
      secret: SECRET,
      timeScale: 0.001,
      seed: 5,
      chaos: { duplicateRate: 1, reserializeRetries: true },
    });
    const client = createPaymentClient({ baseUrl: await sim.listen(0) });

    const order = await client.createOrder(
      orderRequest("evt-1", { application_context: { webhook_url: orderHook.url } }),
    );
    sim.orders.pay(order.id);
    await client.refundPayment({
      origin_id: { origin_order_id: order.id },
      reference_id: "evt-refund",
      webhook_url: refundHook.url,
    });
    await sim.settled();

    const deliveries = sim.deliveries();
    expect(deliveries).toHaveLength(6); // order COMPLETED, order REFUNDED, refund REFUNDED: each sent twice
    expect(deliveries.every((delivery) => delivery.delivered)).toBe(true);
    expect(orders.map((event) => event.order.status).sort()).toEqual(["COMPLETED", "REFUNDED"]);
    expect(orders.every((event) => event.order.id === order.id)).toBe(true);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]!.refund).toMatchObject({ refund_status: "REFUNDED", origin_order_id: order.id });
  });

  it("answers with the status table: 400 naming the path, 401 unsigned, 500 on a throw and then the retry processed", async () => {
    let calls = 0;
    const handle = subscriptionWebhook(
      eventReceiverOptions({
        schema: orderEventSchema,
        logger: silentLogger(),
        idempotency: memoryStore(),
        handler: async () => {
          if (++calls === 1) throw new Error("database down");
        },
      }),
    );
    const post = async (body: unknown) => {
      const response = await handle(
        new Request("http://shop.example/hooks/orders", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
      return { status: response.status, body: (await response.json()) as { processed: boolean; message: string } };
    };
    const event = { id: "EVT-1", event_type: "ORDER_UPDATED", order: { id: "ORD-1", status: "COMPLETED" } };

    const invalid = await post({ id: "EVT-2", event_type: "ORDER_UPDATED", order: { status: "COMPLETED" } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ processed: false });
    expect(invalid.body.message).toContain("order.id");
    expect((await post({ ...event, id: "x".repeat(257) })).body.message).toContain("id");

    expect(await post(event)).toMatchObject({ status: 500, body: { processed: false } });
    expect(await post(event)).toEqual({ status: 200, body: { processed: true, message: "processed" } });
    expect(await post(event)).toEqual({ status: 200, body: { processed: true, message: "already processed" } });
    expect(calls).toBe(2);

    const signed = subscriptionWebhook(
      eventReceiverOptions({
        schema: orderEventSchema,
        logger: silentLogger(),
        verify: standardWebhooksVerifier(SECRET),
        handler: async () => {},
      }),
    );
    const unsigned = await signed(
      new Request("http://shop.example/hooks/orders", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(event),
      }),
    );
    expect(unsigned.status).toBe(401);
  });
});
