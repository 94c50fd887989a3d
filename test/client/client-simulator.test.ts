import { PaymentApiError, type PaymentClient } from "merchant-webhooks/client";
import type { PlatformSimulator } from "merchant-webhooks/simulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderRequest, simulatorAndClient } from "./fixtures.js";

describe("createPaymentClient against the platform simulator", () => {
  let sim: PlatformSimulator;
  let client: PaymentClient;

  beforeAll(async () => {
    ({ sim, client } = await simulatorAndClient());
  });
  afterAll(() => sim.close());

  it("creates an order with a PAYMENT link and queries it by id and by reference", async () => {
    const order = await client.createOrder(orderRequest("shop-order-1"));
    expect(order.id).toMatch(/^ORD-/);
    expect(order.status).toBe("PAYER_ACTION_REQUIRED");
    const payment = order.linksV2?.find((link) => link.rel === "PAYMENT");
    expect(payment?.href).toContain(order.id);
    expect(payment?.method).toBe("GET");

    const byId = await client.queryOrder({ id: order.id });
    const byReference = await client.queryOrder({ reference_id: "shop-order-1" });
    expect(byReference.id).toBe(order.id);
    expect(byId.order_refund_state?.refund_supported).toBe(false);
    expect(byId.purchase_units).toHaveLength(2);
  });

  it("refunds part of a paid order, then the rest in full, tracking the refundable balance", async () => {
    const order = await client.createOrder(orderRequest("shop-order-2"));
    sim.orders.pay(order.id);
    const paid = await client.queryOrder({ id: order.id });
    expect(paid.status).toBe("COMPLETED");
    expect(paid.paid_amount).toBe("25.00");
    expect(paid.order_refund_state).toMatchObject({
      refund_supported: true,
      order_refund_detail: { refundable_balance: { currency_code: "EUR", value: "25.00" } },
    });

    const partial = await client.refundPayment({
      origin_id: { origin_order_id: order.id },
      reference_id: "refund-2a",
      refund_reason: "one item returned",
      refund_units: [{ amount: { currency_code: "EUR", value: "5.01" } }],
    });
    expect(partial.id).toMatch(/^RFD-/);
    expect(partial.refund_status).toBe("REFUNDING");
    expect(
      (await client.queryOrder({ id: order.id })).order_refund_state?.order_refund_detail?.refundable_balance?.value,
    ).toBe("19.99");

    const full = await client.refundPayment({
      origin_id: { origin_reference_id: "shop-order-2" },
      reference_id: "refund-2b",
      refund_units: [],
    });
    expect(full.refund_units?.[0]?.amount).toEqual({ currency_code: "EUR", value: "19.99" });
    const after = await client.queryOrder({ id: order.id });
    expect(after.status).toBe("REFUNDED");
    expect(after.order_refund_state?.order_refund_detail).toMatchObject({
      balance_enough: false,
      refundable_balance: { value: "0.00" },
    });
  });

  it("refuses a refund when refund_supported is false, with the platform's status_detail and request id", async () => {
    const unpaid = await client.createOrder(orderRequest("shop-order-3"));
    const refusal = await client
      .refundPayment({ origin_id: { origin_order_id: unpaid.id }, reference_id: "refund-3" })
      .catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(PaymentApiError);
    expect(refusal).toMatchObject({ status: 422, statusDetail: { name: "REFUND_NOT_SUPPORTED" } });
    expect((refusal as PaymentApiError).requestId).toMatch(/^req-/);

    const notRefundable = await client.createOrder(orderRequest("shop-order-4"));
    sim.orders.pay(notRefundable.id, { refundSupported: false });
    expect((await client.queryOrder({ id: notRefundable.id })).order_refund_state?.refund_supported).toBe(false);
    await expect(
      client.refundPayment({ origin_id: { origin_order_id: notRefundable.id }, reference_id: "refund-4" }),
    ).rejects.toMatchObject({
      status: 422,
      statusDetail: { name: "REFUND_NOT_SUPPORTED" },
    });
  });

  it("refuses a partial refund above the refundable balance, and leaves the balance alone", async () => {
    const order = await client.createOrder(orderRequest("shop-order-5"));
    sim.orders.pay(order.id);
    await expect(
      client.refundPayment({
        origin_id: { origin_order_id: order.id },
        reference_id: "refund-5",
        refund_units: [{ amount: { currency_code: "EUR", value: "25.01" } }],
      }),
    ).rejects.toMatchObject({ status: 422, statusDetail: { name: "REFUND_AMOUNT_EXCEEDS_BALANCE" } });
    expect(
      (await client.queryOrder({ id: order.id })).order_refund_state?.order_refund_detail?.refundable_balance?.value,
    ).toBe("25.00");
  });

  it("answers 404 ORDER_NOT_FOUND for an order of another merchant", async () => {
    const order = await client.createOrder(orderRequest("shop-order-6"));
    await expect(client.queryOrder({ id: order.id }, { merchant_id: "M-OTHER" })).rejects.toMatchObject({
      status: 404,
      statusDetail: { name: "ORDER_NOT_FOUND" },
    });
  });
});
