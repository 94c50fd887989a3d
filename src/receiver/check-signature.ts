import { shownText } from "../logging/shown-text.js";
import { MAX_NOTIFICATION_ID_LENGTH } from "../schema/index.js";
import { raceTimer } from "../shared/time-limit.js";
import type { VerifyHook } from "../verify/verify-hook.js";
import { explainVerify, failure, type VerifyOutcome } from "../verify/verify-outcome.js";
import { type Verdict, verdict } from "./answer-and-log.js";
import { parseJsonObject } from "./parse-json.js";

/** How long a signature check (a per-tenant secret lookup included) may take by default. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 5_000;

export interface SignatureRules {
  verify: VerifyHook;
  /** Past this the answer is 503 (`verify_timed_out`), so a stalled secret lookup does not hold connections. */
  verifyTimeoutMs: number;
  /** Name the reason code in the 401 answer's message. Off by default: the log has it. */
  explainSignatureFailures: boolean;
  /** Headers of a 503 answer (`Retry-After`). */
  unavailableHeaders?: Record<string, string> | undefined;
}

/** A passed check (with the rotated secret's index, if an older one matched), or the refusal to answer. */
export type SignatureCheck = { ok: true; secretIndex: number } | { ok: false; refusal: Verdict };

/**
 * Run the verify hook within its time limit and turn a failure into a verdict whose log line says why
 * (`reason`, `detail`) and for which notification, when the unverified body parses far enough to say.
 */
export async function checkSignature(
  bytes: Uint8Array,
  headers: Record<string, string>,
  rules: SignatureRules,
): Promise<SignatureCheck> {
  const outcome = await withinLimit(explainVerify(rules.verify, bytes, headers), rules.verifyTimeoutMs);
  if (outcome.ok) return { ok: true, secretIndex: outcome.secretIndex };
  const fields = { notification_id: claimedId(bytes), reason: outcome.reason, detail: outcome.detail };
  if (outcome.reason === "verify_timed_out") {
    return { ok: false, refusal: verdict("unavailable", fields, { headers: rules.unavailableHeaders ?? {} }) };
  }
  const message = rules.explainSignatureFailures ? `signature verification failed: ${outcome.reason}` : undefined;
  return { ok: false, refusal: verdict("unauthorized", fields, message === undefined ? {} : { message }) };
}

/** The check's outcome, or `verify_timed_out` once `ms` pass first (0: no limit). */
function withinLimit(check: Promise<VerifyOutcome>, ms: number): Promise<VerifyOutcome> {
  if (ms === 0) return check;
  return raceTimer(check, ms, () =>
    failure("verify_timed_out", `the signature check did not settle within ${ms} ms (verifyTimeoutMs)`),
  );
}

/** The id an unverified body claims, for the log only (cut, card-redacted): never trusted beyond that. */
function claimedId(bytes: Uint8Array): string | undefined {
  const parsed = parseJsonObject(bytes);
  if (!parsed.ok || typeof parsed.value.id !== "string") return undefined;
  return shownText(parsed.value.id, MAX_NOTIFICATION_ID_LENGTH);
}
