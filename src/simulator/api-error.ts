import type { z } from "zod";
import { pathOf } from "../schema/validation-message.js";
import { MerchantWebhooksError } from "../shared/errors.js";

/**
 * A refusal the simulator answers with `{ status_detail: { name, message, details } }`. The platform's
 * HTTP statuses and error names for failed calls are not published; these are the simulator's own.
 */
export class SimulatorApiError extends MerchantWebhooksError {
  constructor(
    override readonly status: number,
    readonly statusName: string,
    message: string,
  ) {
    super("MW_SIMULATOR_API", message, { status });
  }
}

export function invalidRequest(issues: readonly z.core.$ZodIssue[]): SimulatorApiError {
  const listed = issues.slice(0, 5).map((issue) => `${pathOf(issue.path) || "(root)"}: ${issue.message}`);
  return new SimulatorApiError(400, "INVALID_REQUEST", listed.join("; "));
}

/** Parse a request body with `schema`, or refuse it with 400 naming the failing paths. */
export function parseRequest<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw invalidRequest(result.error.issues);
  return result.data;
}
