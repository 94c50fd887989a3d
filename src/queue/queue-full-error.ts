import { MerchantWebhooksError } from "../shared/errors.js";
/** A queue at its limit refuses work with this; the receiver answers 503 "overloaded" with Retry-After. */
export class QueueFullError extends MerchantWebhooksError {
  override name = "QueueFullError";
  constructor(limit: number) {
    super("MW_QUEUE_FULL", `queue is full (${limit} notifications waiting)`, { status: 503 });
  }
}
