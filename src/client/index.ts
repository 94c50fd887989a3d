// merchant-webhooks/client: the platform's API seen from the merchant's side.
export {
  createPaymentClient,
  DEFAULT_MAX_RESPONSE_BYTES,
  type ListOptions,
  type OrderLookup,
  type PaymentClient,
  type PaymentClientOptions,
} from "./create-payment-client.js";
export { InvalidRequestError, PaymentApiError, type PaymentApiErrorCode } from "./errors.js";
export { FUND_SPLIT_DETAILS, type ListEndpoint, MERCHANT_QUOTES, profitSharingDetails } from "./list-endpoints.js";
export { memoryOrderLedger, type OrderLedger, type OrderLedgerEntry } from "./order-ledger.js";
export { DEFAULT_MAX_PAGES, type ListRecord, type Page, type PaginateOptions } from "./paginate.js";
export type { RetryPolicy } from "./retry-policy.js";
export * from "./schemas/index.js";
export type { RequestSigner, SignableRequest } from "./transport.js";
export type * from "./types.js";

import type { PaymentClient as PlatformClient } from "./create-payment-client.js";

declare global {
  namespace MerchantWebhooks {
    interface PlatformTypes {
      /** `ctx.platform`, and the receiver's `platform` option: this client. */
      platform: PlatformClient;
    }
  }
}
