import type { z } from "zod";
import { statusDetailSchema } from "../schema/shared.js";
import { pathOf } from "../schema/validation-message.js";
import { PaymentApiError } from "./errors.js";
import { ResponseTooLargeError, readCappedBody } from "./read-capped-body.js";
import { certainlyNotSent, type ResolvedRetryPolicy, retryDelay } from "./retry-policy.js";

/** What the `sign` hook sees of a request about to be sent. */
export interface SignableRequest {
  method: "POST";
  url: string;
  path: string;
  /** The exact body that will be sent. */
  body: string;
}

/**
 * Adds the request-signature headers. The interface says requests are signed but does not publish the
 * scheme, so the merchant supplies it. Called on every attempt, so a timestamped scheme stays fresh.
 */
export type RequestSigner = (request: SignableRequest) => Record<string, string> | Promise<Record<string, string>>;

export interface TransportOptions {
  baseUrl: string;
  sign?: RequestSigner | undefined;
  fetch: typeof fetch;
  timeoutMs: number;
  /** Largest answer body read, in bytes. */
  maxResponseBytes: number;
  retry: ResolvedRetryPolicy;
}

export interface CallOptions {
  /** Queries and lists: retry on network errors and 5xx. Creates and refunds: only when certainly not sent. */
  idempotent: boolean;
}

/** The request id headers platforms commonly send; the interface names none. */
const REQUEST_ID_HEADERS = ["x-request-id", "request-id", "x-correlation-id"];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export type Transport = <S extends z.ZodType>(
  path: string,
  body: unknown,
  response: S,
  options: CallOptions,
) => Promise<z.output<S>>;

export function createTransport(options: TransportOptions): Transport {
  const base = options.baseUrl.replace(/\/+$/, "");

  async function attempt(
    path: string,
    body: string,
  ): Promise<{ status: number; text: string; requestId: string | undefined }> {
    const url = `${base}${path}`;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (options.sign) Object.assign(headers, await options.sign({ method: "POST", url, path, body }));
    // A redirect would send the body and the signature headers again, to wherever the answer points:
    // it is refused, never followed.
    const response = await options.fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const requestId = REQUEST_ID_HEADERS.map((name) => response.headers.get(name)).find((value) => value) ?? undefined;
    if (
      response.redirected ||
      (response.status >= 300 && response.status < 400) ||
      response.type === "opaqueredirect"
    ) {
      await response.body?.cancel().catch(() => {});
      throw new PaymentApiError(
        `${path}: the server answered with a redirect (HTTP ${response.status}); redirects are refused, so the request and its signature go nowhere else`,
        { status: response.status, requestId, code: "MW_CLIENT_REDIRECT_REFUSED" },
      );
    }
    const text = await readCappedBody(response, options.maxResponseBytes).catch((err: unknown) => {
      if (err instanceof ResponseTooLargeError)
        throw new PaymentApiError(`${path}: ${err.message}`, {
          status: response.status,
          requestId,
          code: "MW_CLIENT_RESPONSE_TOO_LARGE",
          cause: err,
        });
      throw err;
    });
    return { status: response.status, text, requestId };
  }

  return async (path, requestBody, responseSchema, { idempotent }) => {
    const body = JSON.stringify(requestBody);
    for (let attemptNumber = 1; ; attemptNumber++) {
      const last = attemptNumber >= options.retry.attempts;
      let answer;
      try {
        answer = await attempt(path, body);
      } catch (err) {
        // Refused answers (a redirect, a body too large) would only be refused again.
        if (err instanceof PaymentApiError) throw err;
        if (!last && (idempotent || certainlyNotSent(err))) {
          await sleep(retryDelay(options.retry, attemptNumber));
          continue;
        }
        throw new PaymentApiError(`${path}: no answer: ${describe(err)}`, { status: 0, cause: err });
      }
      if (answer.status >= 500 && idempotent && !last) {
        await sleep(retryDelay(options.retry, attemptNumber));
        continue;
      }
      return readAnswer(path, answer, responseSchema);
    }
  };
}

function readAnswer<S extends z.ZodType>(
  path: string,
  answer: { status: number; text: string; requestId: string | undefined },
  schema: S,
): z.output<S> {
  const { status, requestId } = answer;
  let json: unknown;
  try {
    json = answer.text === "" ? undefined : JSON.parse(answer.text);
  } catch {
    json = undefined;
  }
  if (status < 200 || status >= 300) {
    const detail = statusDetailSchema.safeParse((json as { status_detail?: unknown } | undefined)?.status_detail);
    const statusDetail = detail.success ? detail.data : undefined;
    const reason = statusDetail?.name
      ? `${statusDetail.name}${statusDetail.message ? `: ${statusDetail.message}` : ""}`
      : `HTTP ${status}`;
    throw new PaymentApiError(`${path}: ${reason}`, { status, statusDetail, requestId });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const paths = parsed.error.issues.slice(0, 5).map((issue) => `${pathOf(issue.path) || "(root)"}: ${issue.message}`);
    throw new PaymentApiError(`${path}: the answer is not the documented response: ${paths.join("; ")}`, {
      status,
      requestId,
    });
  }
  return parsed.data;
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string } }).cause;
  if (cause?.code) return cause.code;
  const name = (err as Error)?.name;
  if (name === "TimeoutError" || name === "AbortError") return "timed out";
  return (err as Error)?.message ?? String(err);
}
