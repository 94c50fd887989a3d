// merchant-webhooks/client: the platform's API seen from the merchant's side.
export {
  createPaymentClient,
  type PaymentClient,
  type PaymentClientOptions,
  type OrderLookup,
  type ListOptions,
  DEFAULT_MAX_RESPONSE_BYTES,
} from "./create-payment-client.js";
export { PaymentApiError, InvalidRequestError, type PaymentApiErrorCode } from "./errors.js";
export type { RetryPolicy } from "./retry-policy.js";
export type { RequestSigner, SignableRequest } from "./transport.js";
export { FUND_SPLIT_DETAILS, MERCHANT_QUOTES, profitSharingDetails, type ListEndpoint } from "./list-endpoints.js";
export { DEFAULT_MAX_PAGES, type ListRecord, type Page, type PaginateOptions } from "./paginate.js";
export * from "./schemas/index.js";
export type * from "./types.js";
