// merchant-webhooks/client: the platform's API seen from the merchant's side.
export {
  createPaymentClient,
  type PaymentClient,
  type PaymentClientOptions,
  type OrderLookup,
  type ListOptions,
} from "./create-payment-client.js";
export { PaymentApiError, InvalidRequestError } from "./errors.js";
export type { RetryPolicy } from "./retry-policy.js";
export type { RequestSigner, SignableRequest } from "./transport.js";
export { FUND_SPLIT_DETAILS, MERCHANT_QUOTES, profitSharingDetails, type ListEndpoint } from "./list-endpoints.js";
export type { ListRecord, Page, PaginateOptions } from "./paginate.js";
export * from "./schemas/index.js";
export type * from "./types.js";
