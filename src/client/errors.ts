import type { z } from "zod";
import type { StatusDetail } from "../schema/index.js";
import { pathOf } from "../schema/validation-message.js";
import { coded, MerchantWebhooksError } from "../shared/errors.js";

/**
 * Why a call failed: `MW_CLIENT_REDIRECT_REFUSED` (a 3xx; redirects are never followed) and
 * `MW_CLIENT_RESPONSE_TOO_LARGE` (over `maxResponseBytes`) are never retried; `MW_CLIENT_NO_ANSWER` is
 * a network error or time-out (`status` 0); `MW_CLIENT_REFUSED` is any other answer than the documented
 * success.
 */
export type PaymentApiErrorCode =
  | "MW_CLIENT_REDIRECT_REFUSED"
  | "MW_CLIENT_RESPONSE_TOO_LARGE"
  | "MW_CLIENT_NO_ANSWER"
  | "MW_CLIENT_REFUSED";

/**
 * A call the platform did not answer with success: a non-2xx answer, no answer at all (`status` 0:
 * network error or time-out), or an answer whose body is not the documented response.
 */
export class PaymentApiError extends MerchantWebhooksError {
  override readonly name = "PaymentApiError";
  /** The HTTP status; 0 when no answer arrived. */
  declare readonly status: number;
  /** The platform's `status_detail` (name, message, details), when the answer carried one. */
  readonly statusDetail: StatusDetail | undefined;
  /** The platform's request id header, when the answer carried one: quote it to the platform's support. */
  readonly requestId: string | undefined;
  /** Why the call failed; see `PaymentApiErrorCode`. */
  declare readonly code: PaymentApiErrorCode;

  constructor(
    message: string,
    init: {
      status: number;
      statusDetail?: StatusDetail | undefined;
      requestId?: string | undefined;
      code?: PaymentApiErrorCode | undefined;
      cause?: unknown;
    },
  ) {
    const code = init.code ?? (init.status === 0 ? "MW_CLIENT_NO_ANSWER" : "MW_CLIENT_REFUSED");
    super(code, message, { cause: init.cause, status: init.status });
    this.statusDetail = init.statusDetail;
    this.requestId = init.requestId;
  }
}

/** A request that fails the interface's rules; thrown before anything is sent. */
export class InvalidRequestError extends TypeError {
  override readonly name = "InvalidRequestError";
  /** The failing field paths, e.g. `purchase_units[0].description`. */
  readonly paths: readonly string[];
  declare readonly code: "MW_CLIENT_INVALID_REQUEST";

  constructor(operation: string, issues: readonly z.core.$ZodIssue[]) {
    const lines = issues.map((issue) => `${pathOf(issue.path) || "(root)"}: ${issue.message}`);
    // Paths and the rule broken, never the values: a request may carry card data.
    super(`${operation}: invalid request: ${lines.join("; ")}`);
    this.paths = issues.map((issue) => pathOf(issue.path) || "(root)");
    coded(this, "MW_CLIENT_INVALID_REQUEST");
  }
}
