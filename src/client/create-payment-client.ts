import type { z } from "zod";
import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { InvalidRequestError } from "./errors.js";
import { FUND_SPLIT_DETAILS, type ListEndpoint, MERCHANT_QUOTES } from "./list-endpoints.js";
import type { OrderLedger } from "./order-ledger.js";
import { fetchPage, type ListRecord, type Page, type PaginateOptions, paginate } from "./paginate.js";
import { type RetryPolicy, resolveRetryPolicy } from "./retry-policy.js";
import {
  createOrderRequestSchema,
  orderSchema,
  queriedOrderSchema,
  queryOrderRequestSchema,
  refundOrderSchema,
  refundRequestSchema,
} from "./schemas/index.js";
import { createTransport, type RequestSigner } from "./transport.js";
import type { CreateOrderRequest, MonthFilters, Order, QueriedOrder, RefundOrder, RefundRequest } from "./types.js";

export interface PaymentClientOptions {
  /** The service base address, e.g. `https://api.example.com` (paths start with `/v1`). */
  baseUrl: string;
  /** Sent as `merchant_id` where a request has one and the caller left it out. */
  merchantId?: string;
  /** Adds the request-signature headers; the scheme is not published, so it is the merchant's. */
  sign?: RequestSigner;
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch;
  /** Time limit of one attempt, in ms: an integer from 1 to 2^31-1. Default 30 s. */
  timeoutMs?: number;
  /**
   * Largest answer body read, in bytes. Default 10 MiB (10,485,760). A larger answer fails the call
   * with `code: "MW_CLIENT_RESPONSE_TOO_LARGE"` as soon as the limit is passed, and is not retried.
   */
  maxResponseBytes?: number;
  /** Retries of queries and lists. */
  retry?: RetryPolicy;
  /**
   * Remembers each order `createOrder` asks for (written before the request is sent, completed from
   * the answer), so `createReconciler` (merchant-webhooks/reconcile) can query the ones whose events
   * never came. A ledger that cannot be written fails `createOrder` before anything is sent.
   */
  ledger?: OrderLedger;
}

/** 10 MiB: far above any documented answer, far below what would hurt a process. */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** Node's timers hold at most 2^31-1 ms; a larger delay fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A whole, positive number within `max`, or the default when not given; anything else is an error now, not a quiet misbehaviour later. */
function checkedLimit(
  name: string,
  value: number | undefined,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max)
    throw optionError(
      new RangeError(`createPaymentClient: ${name} must be a whole number from 1 to ${max}, got ${String(value)}`),
      "MW_INVALID_OPTION",
      name,
    );
  return value;
}

const CLIENT_KEYS = {
  baseUrl: true,
  merchantId: true,
  sign: true,
  fetch: true,
  timeoutMs: true,
  maxResponseBytes: true,
  retry: true,
  ledger: true,
} as const satisfies KnownKeys<PaymentClientOptions>;
const RETRY_KEYS = { attempts: true, baseDelayMs: true, maxDelayMs: true } as const satisfies KnownKeys<RetryPolicy>;

export type OrderLookup = { id: string; reference_id?: undefined } | { reference_id: string; id?: undefined };

/** A list call: the page size (required) and the endpoint's filters. */
export type ListOptions<F> = Omit<PaginateOptions, "filters" | "key"> & { filters?: F };

export interface PaymentClient {
  /** CreateOrder. Never retried once the request may have reached the platform (see docs/client-and-simulator.md). */
  createOrder(request: CreateOrderRequest): Promise<Order>;
  /** QueryOrder by the platform's order id or the merchant's reference id. */
  queryOrder(lookup: OrderLookup, options?: { merchant_id?: string }): Promise<QueriedOrder>;
  /** RefundPayment: full with empty (or no) `refund_units`, partial with the amounts. Never retried once possibly sent. */
  refundPayment(request: RefundRequest): Promise<RefundOrder>;
  /** One page of a list endpoint. */
  listPage<R extends ListRecord = ListRecord>(
    endpoint: ListEndpoint,
    request: { page_number: number; page_size: number; filters?: Record<string, unknown> },
  ): Promise<Page<R>>;
  /** Every record of a list endpoint across pages, deduplicated. */
  paginate<R extends ListRecord = ListRecord>(
    endpoint: ListEndpoint,
    options: PaginateOptions<R>,
  ): AsyncGenerator<R, void, undefined>;
  /** The fund-split detail list (page size <= 100, month filters `YYYY-MM`). */
  fundSplitDetails(
    options: ListOptions<MonthFilters> & { key?: (record: ListRecord) => string },
  ): AsyncGenerator<ListRecord, void, undefined>;
  /** The merchant-quote list (page size <= 5000). */
  merchantQuotes(
    options: ListOptions<Record<string, unknown>> & { key?: (record: ListRecord) => string },
  ): AsyncGenerator<ListRecord, void, undefined>;
}

/** A typed client for the payment service's CreateOrder, QueryOrder, RefundPayment and list endpoints. */
export function createPaymentClient(options: PaymentClientOptions): PaymentClient {
  rejectUnknownKeys("createPaymentClient", options, Object.keys(CLIENT_KEYS));
  rejectUnknownKeys("createPaymentClient: retry", options?.retry, Object.keys(RETRY_KEYS));
  if (!options.baseUrl)
    throw optionError(new TypeError("createPaymentClient: baseUrl is required"), "MW_INVALID_OPTION", "baseUrl");
  const transport = createTransport({
    baseUrl: options.baseUrl,
    sign: options.sign,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: checkedLimit("timeoutMs", options.timeoutMs, 30_000, MAX_TIMER_MS),
    maxResponseBytes: checkedLimit("maxResponseBytes", options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES),
    retry: resolveRetryPolicy(options.retry),
  });
  const withMerchant = <T extends { merchant_id?: string | undefined }>(request: T): T =>
    request.merchant_id === undefined && options.merchantId !== undefined
      ? { ...request, merchant_id: options.merchantId }
      : request;

  function checked<S extends z.ZodType>(operation: string, schema: S, request: unknown): z.output<S> {
    const result = schema.safeParse(request);
    if (!result.success) throw new InvalidRequestError(operation, result.error.issues);
    return result.data;
  }

  return {
    async createOrder(request) {
      const body = checked("createOrder", createOrderRequestSchema, withMerchant(request));
      const ledger = options.ledger;
      if (!ledger) return transport("/v1/payment/orders", body, orderSchema, { idempotent: false });
      // Written first: an order whose answer is lost is still known by its reference id.
      const entry = { reference_id: body.reference_id, merchant_id: body.merchant_id, created_at: Date.now() };
      await ledger.record(entry);
      const order = await transport("/v1/payment/orders", body, orderSchema, { idempotent: false });
      await ledger.record({ ...entry, id: order.id, status: order.status });
      return order;
    },
    async queryOrder(lookup, queryOptions = {}) {
      const body = checked("queryOrder", queryOrderRequestSchema, withMerchant({ ...lookup, ...queryOptions }));
      return transport("/v1/payment/query", body, queriedOrderSchema, { idempotent: true });
    },
    async refundPayment(request) {
      const body = checked("refundPayment", refundRequestSchema, withMerchant(request));
      return transport("/v1/refund/orders", body, refundOrderSchema, { idempotent: false });
    },
    listPage: (endpoint, request) => fetchPage(transport, endpoint, request),
    paginate: (endpoint, paginateOptions) => paginate(transport, endpoint, paginateOptions),
    fundSplitDetails: (listOptions) => paginate(transport, FUND_SPLIT_DETAILS, listOptions),
    merchantQuotes: (listOptions) => paginate(transport, MERCHANT_QUOTES, listOptions),
  };
}
