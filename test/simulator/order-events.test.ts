import { createPaymentClient, orderEventSchema, type PaymentClient, refundEventSchema } from "merchant-webhooks/client";
import { createPlatformSimulator, type PlatformSimulator } from "merchant-webhooks/simulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderRequest } from "../client/fixtures.js";
import { PROCESSED, scriptedEndpoint } from "./scripted-endpoint.js";

describe("order and refund events (provisional shape) go to the webhook_url of the request", () => {
  let sim: PlatformSimulator;
  let client: PaymentClient;
  let endpoint: Awaited<ReturnType<typeof scriptedEndpoint>>;

  beforeAll(async () => {
    endpoint = await scriptedEndpoint([PROCESSED]);
    sim = createPlatformSimulator({ timeScale: 0.001 });
    client = createPaymentClient({ baseUrl: await sim.listen(0) });
  });
  afterAll(async () => {
    await sim.close();
    await endpoint.close();
  });

  it("sends an order event when the order is paid and a refund event when it is refunded, never with card secrets", async () => {
    const order = await client.createOrder(
      orderRequest("evented", {
        application_context: {
          payment_method: { name: "CHECKOUT_PAGE" },
          webhook_url: `${endpoint.url}?for=order`,
          payment_info: { card_info: { cvc: "737", card_pwd: "1234", card_bin: "411111" } },
        },
      }),
    );
    sim.orders.pay(order.id);
    // Deliveries run concurrently: let the payment's event land before the refund's, to read them in order.
    await sim.settled();
    await client.refundPayment({
      origin_id: { origin_order_id: order.id },
      reference_id: "refund-evented",
      webhook_url: `${endpoint.url}?for=refund`,
    });
    await sim.settled();

    const events = endpoint.received.map((request) => JSON.parse(request.body) as Record<string, unknown>);
    const orderEvents = events
      .filter((event) => event.event_type === "ORDER_UPDATED")
      .map((event) => orderEventSchema.parse(event));
    const refundEvents = events
      .filter((event) => event.event_type === "REFUND_UPDATED")
      .map((event) => refundEventSchema.parse(event));
    expect(orderEvents.map((event) => event.order.status)).toEqual(["COMPLETED", "REFUNDED"]);
    expect(orderEvents[0]!.order).toMatchObject({
      id: order.id,
      paid_amount: "25.00",
      order_refund_state: { refund_supported: true },
    });
    expect(refundEvents).toHaveLength(1);
    expect(refundEvents[0]!.refund).toMatchObject({ refund_status: "REFUNDED", origin_order_id: order.id });
    expect(
      sim
        .deliveries()
        .map((delivery) => delivery.kind)
        .sort(),
    ).toEqual(["order", "order", "refund"]);

    const everything =
      endpoint.received.map((request) => request.body).join("\n") +
      JSON.stringify(await client.queryOrder({ id: order.id }));
    // The CVC as a JSON value (string or number); a bare digit search would also hit the server's port.
    expect(everything).not.toMatch(/"737"|:737[,}\]]/);
    expect(everything).not.toContain("card_pwd");
    expect(everything).not.toContain('"cvc"');
  });
});
