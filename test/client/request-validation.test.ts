import { type CreateOrderRequest, InvalidRequestError, type PaymentClient } from "merchant-webhooks/client";
import type { PlatformSimulator } from "merchant-webhooks/simulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderRequest, simulatorAndClient } from "./fixtures.js";

describe("requests are checked against the interface's limits before they are sent", () => {
  let sim: PlatformSimulator;
  let client: PaymentClient;

  beforeAll(async () => {
    ({ sim, client } = await simulatorAndClient());
  });
  afterAll(() => sim.close());

  const base = orderRequest("limits");
  const unit = base.purchase_units[0]!;
  const cases: [string, CreateOrderRequest, string][] = [
    ["no purchase unit", { ...base, purchase_units: [] }, "purchase_units"],
    [
      "a description of 1,001 characters",
      { ...base, purchase_units: [{ ...unit, description: "x".repeat(1001) }] },
      "purchase_units[0].description",
    ],
    ["a merchant_id of 65 characters", { ...base, merchant_id: "m".repeat(65) }, "merchant_id"],
    [
      "a language_code of 12 characters",
      { ...base, application_context: { language_code: "de-Latn-DEUX" } },
      "application_context.language_code",
    ],
    ["a payer_statement of 3 characters", { ...base, payer: { payer_statement: "ABC" } }, "payer.payer_statement"],
    [
      "a payer_statement of 65 characters",
      { ...base, payer: { payer_statement: `A${"b".repeat(64)}` } },
      "payer.payer_statement",
    ],
    [
      "a payer_statement with a character outside the set",
      { ...base, payer: { payer_statement: "SHOP*NAME" } },
      "payer.payer_statement",
    ],
    ["a phone of 4 digits", { ...base, payer: { payer_telephone_number: "+1234" } }, "payer.payer_telephone_number"],
    [
      "a phone of 21 digits",
      { ...base, payer: { payer_telephone_number: "1".repeat(21) } },
      "payer.payer_telephone_number",
    ],
    [
      "a color_depth not listed",
      { ...base, application_context: { browser_info: { color_depth: 12 as 8 } } },
      "application_context.browser_info.color_depth",
    ],
    [
      "an amount with a comma",
      { ...base, purchase_units: [{ ...unit, amount: { currency_code: "EUR", value: "19,99" } }] },
      "purchase_units[0].amount.value",
    ],
    [
      "a four-letter currency",
      { ...base, purchase_units: [{ ...unit, amount: { currency_code: "EURO", value: "19.99" } }] },
      "purchase_units[0].amount.currency_code",
    ],
    [
      "a card payment without the tax fields",
      { ...base, application_context: { payment_method: { name: "CREDIT_CARD" } } },
      "purchase_units[0].amount.breakdown.tax_check_mode",
    ],
  ];

  it.each(cases)("createOrder with %s throws naming the field path, and sends nothing", async (_, request, path) => {
    const before = sim.requestCount;
    const error = await client.createOrder(request).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).paths).toContain(path);
    expect((error as Error).message).toContain(path);
    expect(sim.requestCount).toBe(before);
  });

  it("accepts the limits' edges: 4 and 64 character statements, 5 and 20 digit phones, 11 character language", async () => {
    for (const payer of [
      { payer_statement: "ABCD", payer_telephone_number: "12345" },
      { payer_statement: `A${"b".repeat(63)}`, payer_telephone_number: `+${"9".repeat(20)}` },
    ]) {
      const reference = `edge-${payer.payer_statement.length}`;
      await expect(
        client.createOrder({ ...orderRequest(reference), payer, application_context: { language_code: "zh-Hant-TW" } }),
      ).resolves.toMatchObject({ id: expect.any(String) });
    }
  });

  it("refundPayment refuses a reason over 128 characters and a refund without an origin", async () => {
    const long = client.refundPayment({
      origin_id: { origin_order_id: "ORD-1" },
      reference_id: "r",
      refund_reason: "x".repeat(129),
    });
    await expect(long).rejects.toThrow(/refund_reason/);
    await expect(client.refundPayment({ origin_id: {}, reference_id: "r" })).rejects.toThrow(/origin_id/);
  });

  it("never puts the request's values in the error, so card data cannot leak through it", async () => {
    const request = orderRequest("card", {
      application_context: {
        payment_method: { name: "CHECKOUT_PAGE" },
        payment_info: { card_info: { cvc: "737", card_bin: "411111" } },
        mcc: "12",
      },
    });
    const error = (await client.createOrder(request).catch((err: unknown) => err)) as Error;
    expect(error.message).toContain("application_context.mcc");
    expect(error.message).not.toContain("737");
  });
});
