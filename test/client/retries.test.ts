import { createPaymentClient, PaymentApiError, type PaymentClient } from "merchant-webhooks/client";
import type { PlatformSimulator } from "merchant-webhooks/simulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/redis.js";
import { orderRequest, simulatorAndClient } from "./fixtures.js";

describe("retries: queries retry, creates and refunds never repeat a request that may have arrived", () => {
  let sim: PlatformSimulator;
  let client: PaymentClient;

  beforeAll(async () => {
    ({ sim, client } = await simulatorAndClient({ retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 } }));
  });
  afterAll(() => sim.close());

  it("retries a query after 503s and returns the answer", async () => {
    const order = await client.createOrder(orderRequest("retry-1"));
    sim.failNext("/v1/payment/query", 503, 2);
    const before = sim.requestCount;
    await expect(client.queryOrder({ id: order.id })).resolves.toMatchObject({ id: order.id });
    expect(sim.requestCount - before).toBe(3);
  });

  it("gives up after the attempt limit with the last status", async () => {
    sim.failNext("/v1/payment/query", 502, 5);
    const before = sim.requestCount;
    await expect(client.queryOrder({ reference_id: "retry-1" })).rejects.toMatchObject({
      status: 502,
      statusDetail: { name: "INJECTED_FAULT" },
    });
    expect(sim.requestCount - before).toBe(3);
    sim.failNext("/v1/payment/query", 502, 0);
  });

  it("does not retry createOrder or refundPayment after a 5xx: the platform may have acted on it", async () => {
    sim.failNext("/v1/payment/orders", 503, 1);
    const before = sim.requestCount;
    const error = await client.createOrder(orderRequest("retry-2")).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PaymentApiError);
    expect(error).toMatchObject({ status: 503 });
    expect(sim.requestCount - before).toBe(1);

    sim.failNext("/v1/refund/orders", 500, 1);
    await expect(
      client.refundPayment({ origin_id: { origin_order_id: "ORD-000001" }, reference_id: "r" }),
    ).rejects.toMatchObject({ status: 500 });
    expect(sim.requestCount - before).toBe(2);
  });

  it("does not retry a 4xx, even for a query", async () => {
    const before = sim.requestCount;
    await expect(client.queryOrder({ id: "ORD-NONE" })).rejects.toMatchObject({ status: 404 });
    expect(sim.requestCount - before).toBe(1);
  });

  it("retries createOrder when the connection was refused (nothing reached a server), and reports status 0 in the end", async () => {
    let calls = 0;
    const port = await freePort();
    const refusing = createPaymentClient({
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { attempts: 2, baseDelayMs: 1 },
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const error = await refusing.createOrder(orderRequest("refused")).catch((err: unknown) => err);
    expect(error).toMatchObject({ status: 0 });
    expect((error as Error).message).toContain("ECONNREFUSED");
    expect(calls).toBe(2);
  });

  it("reads answers leniently: unknown fields and enum values pass through", async () => {
    const lenient = createPaymentClient({
      baseUrl: "http://platform.invalid",
      fetch: async () =>
        Response.json({
          id: "ORD-X",
          status: "PARTIALLY_CAPTURED",
          new_field: { nested: true },
          linksV2: [{ rel: "FUTURE_REL", href: "https://x", method: "GET" }],
        }),
    });
    const order = await lenient.queryOrder({ id: "ORD-X" });
    expect(order.status).toBe("PARTIALLY_CAPTURED");
    expect(order.linksV2?.[0]?.rel).toBe("FUTURE_REL");
    expect((order as Record<string, unknown>).new_field).toEqual({ nested: true });
  });

  it("calls the sign hook on every attempt with the exact body, and sends its headers", async () => {
    const seen: { body: string; signature: string | null }[] = [];
    const signed = createPaymentClient({
      baseUrl: sim.baseUrl,
      merchantId: "M-SIGNED",
      retry: { attempts: 2, baseDelayMs: 1 },
      sign: ({ body, path }) => ({ "x-signature": `sig:${path}:${body.length}` }),
      fetch: async (input, init) => {
        seen.push({ body: String(init?.body), signature: new Headers(init?.headers).get("x-signature") });
        return fetch(input, init);
      },
    });
    sim.failNext("/v1/payment/query", 503, 1);
    await expect(signed.queryOrder({ id: "ORD-NONE" })).rejects.toMatchObject({ status: 404 });
    expect(seen).toHaveLength(2);
    for (const attempt of seen) {
      expect(JSON.parse(attempt.body)).toEqual({ id: "ORD-NONE", merchant_id: "M-SIGNED" });
      expect(attempt.signature).toBe(`sig:/v1/payment/query:${attempt.body.length}`);
    }
  });
});
