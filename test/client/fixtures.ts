import { type CreateOrderRequest, createPaymentClient, type PaymentClientOptions } from "merchant-webhooks/client";
import { createPlatformSimulator, type PlatformSimulator } from "merchant-webhooks/simulator";

/** A simulator serving on an ephemeral port and a client pointed at it. */
export async function simulatorAndClient(clientOptions: Partial<PaymentClientOptions> = {}) {
  const sim: PlatformSimulator = createPlatformSimulator({ seed: 1 });
  const baseUrl = await sim.listen(0);
  const client = createPaymentClient({ baseUrl, retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...clientOptions });
  return { sim, client, baseUrl };
}

/** A valid CreateOrder request of two units: 19.99 + 5.01 EUR. */
export function orderRequest(reference: string, overrides: Partial<CreateOrderRequest> = {}): CreateOrderRequest {
  return {
    reference_id: reference,
    purchase_units: [
      { reference_id: "unit-1", amount: { currency_code: "EUR", value: "19.99" }, description: "Monthly plan" },
      { reference_id: "unit-2", amount: { currency_code: "EUR", value: "5.01" }, description: "Add-on" },
    ],
    application_context: {
      payment_method: { name: "CHECKOUT_PAGE" },
      return_url: "https://shop.example/return",
      language_code: "de-DE",
    },
    payer: { payer_id: "payer-1", payer_statement: "EXAMPLE SHOP", payer_telephone_number: "+4930123456" },
    ...overrides,
  };
}
