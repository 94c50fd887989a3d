import { optionError } from "../shared/errors.js";
/** How queries and lists retry; CreateOrder and RefundPayment never retry once a request may have arrived. */
export interface RetryPolicy {
  /** Attempts in all, the first included. Default 3; 1 turns retries off. */
  attempts?: number;
  /** Delay before the first retry; doubled for each later one, with jitter. Default 200 ms. */
  baseDelayMs?: number;
  /** Ceiling of one delay. Default 5 s. */
  maxDelayMs?: number;
}

export interface ResolvedRetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export function resolveRetryPolicy(policy: RetryPolicy = {}): ResolvedRetryPolicy {
  const attempts = policy.attempts ?? 3;
  if (!Number.isInteger(attempts) || attempts < 1)
    throw optionError(
      new RangeError(`retry.attempts must be a positive integer, got ${attempts}`),
      "MW_INVALID_OPTION",
      "retry.attempts",
    );
  return { attempts, baseDelayMs: policy.baseDelayMs ?? 200, maxDelayMs: policy.maxDelayMs ?? 5_000 };
}

/** "Equal jitter": half the exponential delay fixed, half random, so clients that failed together spread out. */
export function retryDelay(policy: ResolvedRetryPolicy, retry: number): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return exponential / 2 + Math.random() * (exponential / 2);
}

/**
 * Errors raised before a connection existed, so the request cannot have reached the server: safe to
 * retry even for a call that is not idempotent.
 */
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

export function certainlyNotSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === "string" && NOT_SENT_CODES.has(cause.code);
}
