import type { VerifyHook } from "./verify-hook.js";

/**
 * Why a signature check failed, as a stable code: it goes into the log line, into the error
 * `parseNotification` throws (`err.reason`) and, when asked for, into the answer. Never a secret, an
 * expected signature or a piece of one.
 */
export const SIGNATURE_FAILURE_REASONS = [
  /** The header carrying the signature (or, for Standard Webhooks, the message id) is absent. */
  "no_signature_header",
  /** Signatures are present, but none in the configured scheme (prefix, or Standard Webhooks version). */
  "unknown_scheme",
  /** The signature header is there but cannot be decoded (not hex, not base64, no `v1,` entry shape). */
  "malformed_header",
  /** A signed timestamp is configured and its header is absent. */
  "no_timestamp",
  /** The timestamp is not whole Unix seconds. */
  "malformed_timestamp",
  /** The timestamp is further from the receiver's clock than the tolerance; the detail says by how much, and which way. */
  "timestamp_outside_tolerance",
  /** The secret function returned no secret for this delivery (an unknown tenant). */
  "no_secret_for_tenant",
  /** The secret function threw, or returned a secret that cannot be used. */
  "secret_lookup_failed",
  /** Well-formed signatures, none made with any configured secret over these bytes. */
  "no_signature_matched",
  /** A custom `verify` hook returned false. */
  "verify_rejected",
  /** A custom `verify` hook threw. */
  "verify_threw",
  /** The check (a secret function included) did not settle within `verifyTimeoutMs`: answered 503. */
  "verify_timed_out",
] as const;

export type SignatureFailureReason = (typeof SIGNATURE_FAILURE_REASONS)[number];

/** A failed check: the code, and a sentence for the log that names no secret and no expected signature. */
export interface VerifyFailure {
  ok: false;
  reason: SignatureFailureReason;
  detail: string;
}

/** A passed check; `secretIndex` > 0 when an older secret of a rotation matched. */
export interface VerifyPass {
  ok: true;
  secretIndex: number;
}

export type VerifyOutcome = VerifyPass | VerifyFailure;

export const failure = (reason: SignatureFailureReason, detail: string): VerifyFailure => ({
  ok: false,
  reason,
  detail,
});

/** Where the library's own verifiers keep their explaining check, beside the plain boolean hook. */
const EXPLAIN = Symbol.for("merchant-webhooks.verify.explain");

type Check = (rawBody: Uint8Array, headers: Readonly<Record<string, string>>) => Promise<VerifyOutcome>;

/** A boolean `VerifyHook` that also answers why, for the receiver and `parseNotification`. */
export function explainingHook(check: Check): VerifyHook {
  const hook: VerifyHook = async (rawBody, headers) => (await check(rawBody, headers)).ok;
  Object.defineProperty(hook, EXPLAIN, { value: check });
  return hook;
}

/**
 * Run a verify hook and say why it failed. The library's verifiers explain themselves; a hook of the
 * user's own can only say no (`verify_rejected`) or throw (`verify_threw`).
 */
export async function explainVerify(
  hook: VerifyHook,
  rawBody: Uint8Array,
  headers: Readonly<Record<string, string>>,
): Promise<VerifyOutcome> {
  const check = (hook as { [EXPLAIN]?: Check })[EXPLAIN];
  try {
    if (check) return await check(rawBody, headers);
    return (await hook(rawBody, headers)) === true
      ? { ok: true, secretIndex: 0 }
      : failure("verify_rejected", "the verify hook returned false");
  } catch (err) {
    const name = err instanceof Error ? err.name : typeof err;
    return failure("verify_threw", `the verify hook threw (${name})`);
  }
}
