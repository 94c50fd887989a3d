import type { z } from "zod";
import type { StatusDetail } from "../schema/index.js";
import { pathOf } from "../schema/validation-message.js";

export type PaymentApiErrorCode = "REDIRECT_REFUSED" | "RESPONSE_TOO_LARGE";

/**
 * A call the platform did not answer with success: a non-2xx answer, no answer at all (`status` 0:
 * network error or time-out), or an answer whose body is not the documented response.
 */
export class PaymentApiError extends Error {
  override readonly name = "PaymentApiError";
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** The platform's `status_detail` (name, message, details), when the answer carried one. */
  readonly statusDetail: StatusDetail | undefined;
  /** The platform's request id header, when the answer carried one: quote it to the platform's support. */
  readonly requestId: string | undefined;
  /**
   * Why the client refused an answer it got: `REDIRECT_REFUSED` (a 3xx; redirects are never followed)
   * or `RESPONSE_TOO_LARGE` (over `maxResponseBytes`). Undefined otherwise. Neither is retried.
   */
  readonly code: PaymentApiErrorCode | undefined;

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
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.statusDetail = init.statusDetail;
    this.requestId = init.requestId;
    this.code = init.code;
  }
}

/** A request that fails the interface's rules; thrown before anything is sent. */
export class InvalidRequestError extends TypeError {
  override readonly name = "InvalidRequestError";
  /** The failing field paths, e.g. `purchase_units[0].description`. */
  readonly paths: readonly string[];

  constructor(operation: string, issues: readonly z.core.$ZodIssue[]) {
    const lines = issues.map((issue) => `${pathOf(issue.path) || "(root)"}: ${issue.message}`);
    // Paths and the rule broken, never the values: a request may carry card data.
    super(`${operation}: invalid request: ${lines.join("; ")}`);
    this.paths = issues.map((issue) => pathOf(issue.path) || "(root)");
  }
}
