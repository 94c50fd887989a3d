import { createOrderRequestSchema, queryOrderRequestSchema, refundRequestSchema } from "../client/schemas/index.js";
import type { QueriedOrder, RefundOrder } from "../client/types.js";
import { buildCardInfo } from "../testing/builders.js";
import { parseRequest, SimulatorApiError } from "./api-error.js";
import { idSequence, rfc3339 } from "./clock.js";
import { addDecimal, compareDecimal, subtractDecimal } from "./decimal.js";

/** The merchant of the (unchecked) request signature, used where a request leaves merchant_id empty. */
export const DEFAULT_MERCHANT_ID = "M-SIMULATOR";

interface StoredOrder {
  order: QueriedOrder & { id: string; merchant_id: string; reference_id: string };
  currency: string;
  total: string;
  refundable: string;
  paid: boolean;
  refundSupported: boolean;
  webhookUrl: string | undefined;
}

export interface PayOptions {
  /** What QueryOrder then says in order_refund_state.refund_supported. Default true. */
  refundSupported?: boolean;
}

/** Where the book sends order and refund events (to the webhook_url of the request). */
export interface EventSink {
  orderEvent(url: string, order: QueriedOrder): void;
  refundEvent(url: string, refund: RefundOrder & { origin_order_id: string }): void;
}

/**
 * Orders and refunds in memory, with the rules the interface states: a refund only when
 * refund_supported is true, never more than the refundable balance; full with no refund units.
 */
export function createOrderBook(options: { baseUrl: () => string; events: EventSink }) {
  const orders = new Map<string, StoredOrder>();
  const byReference = new Map<string, string>();
  const orderId = idSequence("ORD");
  const refundId = idSequence("RFD");
  const referenceKey = (merchant: string, reference: string) => `${merchant}\u0000${reference}`;

  function find(lookup: {
    id?: string | undefined;
    reference_id?: string | undefined;
    merchant_id?: string | undefined;
  }): StoredOrder {
    const merchant = lookup.merchant_id || DEFAULT_MERCHANT_ID;
    const id = lookup.id ?? byReference.get(referenceKey(merchant, lookup.reference_id ?? ""));
    const stored = id === undefined ? undefined : orders.get(id);
    if (!stored || stored.order.merchant_id !== merchant)
      throw new SimulatorApiError(404, "ORDER_NOT_FOUND", "no such order for this merchant");
    return stored;
  }

  function view(stored: StoredOrder): QueriedOrder {
    const refundSupported = stored.paid && stored.refundSupported;
    return {
      ...structuredClone(stored.order),
      order_refund_state: {
        refund_supported: refundSupported,
        order_refund_detail: {
          balance_enough: refundSupported && compareDecimal(stored.refundable, "0") > 0,
          refundable_balance: { currency_code: stored.currency, value: stored.refundable },
          reference_id: stored.order.reference_id,
        },
      },
    };
  }

  function touch(stored: StoredOrder, status: string): void {
    stored.order.status = status;
    stored.order.update_time = rfc3339();
    if (stored.webhookUrl) options.events.orderEvent(stored.webhookUrl, view(stored));
  }

  return {
    create(body: unknown): QueriedOrder {
      const request = parseRequest(createOrderRequestSchema, body);
      const merchant = request.merchant_id || DEFAULT_MERCHANT_ID;
      const currencies = new Set(request.purchase_units.map((unit) => unit.amount.currency_code));
      if (currencies.size > 1)
        throw new SimulatorApiError(400, "INVALID_REQUEST", "purchase_units: one currency per order");
      if (byReference.has(referenceKey(merchant, request.reference_id))) {
        throw new SimulatorApiError(409, "DUPLICATE_REFERENCE_ID", "an order with this reference_id exists");
      }
      const id = orderId();
      const now = rfc3339();
      const payUrl = `${options.baseUrl()}/checkout/${id}`;
      const stored: StoredOrder = {
        // Only what an order answer carries: the payment info (card data included) is never kept.
        order: {
          id,
          merchant_id: merchant,
          reference_id: request.reference_id,
          create_time: now,
          update_time: now,
          status: "PAYER_ACTION_REQUIRED",
          purchase_units: request.purchase_units,
          links: [{ description: "payment", url: payUrl }],
          linksV2: [{ rel: "PAYMENT", href: payUrl, method: "GET" }],
          ...(request.metadata ? { metadata: request.metadata } : {}),
        },
        currency: [...currencies][0]!,
        total: request.purchase_units.reduce((sum, unit) => addDecimal(sum, unit.amount.value), "0"),
        refundable: "0",
        paid: false,
        refundSupported: true,
        webhookUrl: request.application_context?.webhook_url,
      };
      orders.set(id, stored);
      byReference.set(referenceKey(merchant, request.reference_id), id);
      return view(stored);
    },

    /**
     * The order a subscription's renewal charges: created paid (COMPLETED), with no order event, so the
     * renewal's `payment_detail.order_id` names an order QueryOrder finds.
     */
    renewalOrder(merchant: string, reference: string, amount: { currency_code: string; value: string }): QueriedOrder {
      const created = this.create({
        merchant_id: merchant,
        reference_id: reference,
        purchase_units: [{ reference_id: reference, amount }],
      });
      const stored = orders.get(created.id)!;
      stored.paid = true;
      stored.refundable = stored.total;
      stored.order.paid_amount = stored.total;
      stored.order.payment_channel = "CREDIT_CARD";
      stored.order.status = "COMPLETED";
      return view(stored);
    },

    query(body: unknown): QueriedOrder {
      return view(find(parseRequest(queryOrderRequestSchema, body)));
    },

    /** The payer pays: COMPLETED, the whole amount paid and refundable; an order event is sent. */
    pay(id: string, payOptions: PayOptions = {}): QueriedOrder {
      const stored = orders.get(id);
      if (!stored) throw new SimulatorApiError(404, "ORDER_NOT_FOUND", `no order ${id}`);
      stored.paid = true;
      stored.refundSupported = payOptions.refundSupported ?? true;
      stored.refundable = stored.total;
      stored.order.paid_amount = stored.total;
      stored.order.payment_channel = "CREDIT_CARD";
      stored.order.card_info = buildCardInfo();
      touch(stored, "COMPLETED");
      return view(stored);
    },

    refund(body: unknown): RefundOrder {
      const request = parseRequest(refundRequestSchema, body);
      const origin = request.origin_id;
      const stored = find({
        id: origin.origin_order_id,
        reference_id: origin.origin_order_id ? undefined : origin.origin_reference_id,
        merchant_id: request.merchant_id,
      });
      if (!stored.paid || !stored.refundSupported)
        throw new SimulatorApiError(422, "REFUND_NOT_SUPPORTED", "this order cannot be refunded through the API");
      const units = request.refund_units;
      if (units.some((unit) => unit.amount.currency_code !== stored.currency)) {
        throw new SimulatorApiError(400, "INVALID_CURRENCY", "refund_units: the currency differs from the order's");
      }
      const amount =
        units.length === 0 ? stored.refundable : units.reduce((sum, unit) => addDecimal(sum, unit.amount.value), "0");
      if (compareDecimal(amount, "0") <= 0 || compareDecimal(amount, stored.refundable) > 0) {
        throw new SimulatorApiError(422, "REFUND_AMOUNT_EXCEEDS_BALANCE", "the refund exceeds the refundable balance");
      }
      stored.refundable = subtractDecimal(stored.refundable, amount);
      const now = rfc3339();
      const refund: RefundOrder = {
        id: refundId(),
        create_time: now,
        update_time: now,
        refund_status: "REFUNDING",
        status: "REFUNDING",
        refund_units: units.length > 0 ? units : [{ amount: { currency_code: stored.currency, value: amount } }],
        ...(request.metadata ? { metadata: request.metadata } : {}),
      };
      // The refund settles at once in the simulator; its event reports the final state.
      if (request.webhook_url) {
        options.events.refundEvent(request.webhook_url, {
          ...refund,
          refund_status: "REFUNDED",
          status: "REFUNDED",
          origin_order_id: stored.order.id,
        });
      }
      if (compareDecimal(stored.refundable, "0") === 0) touch(stored, "REFUNDED");
      return refund;
    },
  };
}

export type OrderBook = ReturnType<typeof createOrderBook>;
