import type {
  Address,
  CardAdditionData,
  CardInfo,
  Money,
  PaymentDetail,
  Product,
  PurchaseUnit,
  Subscriber,
} from "../schema/index.js";
import { type DeepPartial, deepMerge } from "./deep-merge.js";

// Builders for the shared types, each a complete valid value that overrides adjust at any depth. The
// values are fixed so a test that prints one gets the same text every run.

export function buildMoney(overrides?: DeepPartial<Money>): Money {
  return deepMerge<Money>({ currency_code: "EUR", value: "19.99" }, overrides);
}

export function buildAddress(overrides?: DeepPartial<Address>): Address {
  return deepMerge<Address>(
    { region_code: "DE", city: "Berlin", street: "Example Street", house_number_or_name: "1", postal_code: "10115" },
    overrides,
  );
}

/**
 * Card details as the platform reports them after a payment: the number only ever masked. There is no
 * `cvc`: the platform may send one, but a builder that makes one would teach tests to expect it.
 */
export function buildCardInfo(overrides?: DeepPartial<CardInfo>): CardInfo {
  return deepMerge<CardInfo>(
    {
      card_bin: "411111",
      card_mask: "411111******1111",
      card_brand: "VISA",
      card_type: "VISA",
      funding_source: "CREDIT",
      card_issuing_country: "DE",
      expiry_month: "09",
      expiry_year: "2030",
      holder_name: "ADA EXAMPLE",
    },
    overrides,
  );
}

export function buildCardAdditionData(overrides?: DeepPartial<CardAdditionData>): CardAdditionData {
  return deepMerge<CardAdditionData>(
    { cvc_result: "M", avs_result: "Y", liability_shift: true, threed_offered: true, threed_authenticated: true },
    overrides,
  );
}

/** One unit of 19.99 EUR: 16.80 net plus 19% VAT, so the breakdown adds up. */
export function buildPurchaseUnit(overrides?: DeepPartial<PurchaseUnit>): PurchaseUnit {
  return deepMerge<PurchaseUnit>(
    {
      reference_id: "unit-1",
      amount: {
        currency_code: "EUR",
        value: "19.99",
        breakdown: {
          item_total: buildMoney({ value: "16.80" }),
          tax_total: buildMoney({ value: "3.19" }),
          tax_check_mode: "TOTAL_AMOUNT",
          taxes: [
            {
              tax_type: "ECOMMERCE_CONSUMPTION_TAX",
              tax_name: "VAT",
              tax_rate: "19",
              tax_amount: buildMoney({ value: "3.19" }),
            },
          ],
        },
      },
      payee: { merchant_id: "M-TEST-0001", email_address: "billing@merchant.example" },
      description: "Pro plan, one month",
      items: [{ id: "PLAN-PRO-MONTHLY", name: "Pro plan", description: "Monthly subscription" }],
    },
    overrides,
  );
}

/** A successful card payment of one purchase unit. */
export function buildPaymentDetail(overrides?: DeepPartial<PaymentDetail>): PaymentDetail {
  return deepMerge<PaymentDetail>(
    {
      payment_result: "SUCCESS",
      order_id: "ORD-TEST-0001",
      status: "COMPLETED",
      payment_channel: "CREDIT_CARD",
      payer_id: "CUST-TEST-0001",
      amount: buildMoney(),
      purchase_units: [buildPurchaseUnit()],
      card_info: buildCardInfo(),
      card_addition_data: buildCardAdditionData(),
      merchant_metadata: { customer_ref: "crm-0001" },
    },
    overrides,
  );
}

export function buildSubscriber(overrides?: DeepPartial<Subscriber>): Subscriber {
  return deepMerge<Subscriber>(
    {
      id: "CUST-TEST-0001",
      name: "Ada Example",
      email: "ada@example.com",
      ip: "203.0.113.7",
      phone_number: "+49 30 1234567",
      address: buildAddress(),
    },
    overrides,
  );
}

export function buildProduct(overrides?: DeepPartial<Product>): Product {
  return deepMerge<Product>(
    { id: "PLAN-PRO-MONTHLY", name: "Pro plan", description: "Monthly subscription" },
    overrides,
  );
}
