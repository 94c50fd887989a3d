import type { z } from "zod";
import { shownText } from "../logging/shown-text.js";
import { passesEnvelopeCheck } from "../schema/envelope-check.js";
import {
  MAX_NOTIFICATION_ID_LENGTH,
  type SubscriptionNotification,
  subscriptionNotificationSchema,
} from "../schema/index.js";
import { validationMessage } from "../schema/validation-message.js";
import { raceTimer } from "../shared/time-limit.js";
import type { VerifyHook } from "../verify/verify-hook.js";
import { explainVerify, failure, type VerifyOutcome } from "../verify/verify-outcome.js";
import { type EarlyRejection, type Verdict, verdict } from "./answer-and-log.js";
import type { Fingerprinter } from "./fingerprint.js";
import { DEFAULT_VERIFY_TIMEOUT_MS, type SenderCheck } from "./options.js";
import {
  dropKeysOrTooDeep,
  MAX_BODY_DEPTH,
  parseJsonObject,
  parseJsonText,
  TOO_DEEP_MESSAGE,
  valueNestsDeeperThan,
} from "./parse-json.js";

/** Longest piece of a sender's header text put in a log line. */
const MAX_REASON_SHOWN = 100;

/** Headers as Node (`IncomingHttpHeaders`) or the Fetch API (`Headers`) hold them. */
export type HeaderSource = Headers | Record<string, string | string[] | number | undefined>;

/** The framework-neutral request an adapter builds. */
export interface ReceiverRequest {
  method: string;
  headers: HeaderSource;
  /** The exact bytes received. */
  rawBody?: Uint8Array;
  /**
   * A body an earlier middleware already parsed, when the raw bytes are gone. Accepted for unsigned
   * notifications only: a signature cannot be checked against a re-serialization.
   */
  parsedBody?: unknown;
  /**
   * Told the notification once intake accepts it, before it is claimed and dispatched, so an adapter
   * can hand it to its framework (Hono's `c.var.notification`). Not called for a refused request.
   */
  onAccepted?: (notification: SubscriptionNotification) => void;
}

/** What intake needs to know of the receiver's options. */
export interface IntakeRules {
  bodyLimit: number;
  verify?: VerifyHook | undefined;
  /** `ReceiverOptions.authorizeSender`. */
  authorizeSender?: SenderCheck | undefined;
  /** `ReceiverOptions.verifyTimeoutMs`; default 5 s. */
  verifyTimeoutMs?: number | undefined;
  /** `ReceiverOptions.explainSignatureFailures`. */
  explainSignatureFailures?: boolean | undefined;
  /** Headers of a 503 answer (`Retry-After`). */
  unavailableHeaders?: Record<string, string> | undefined;
  /** `ReceiverOptions.eventSchema`: another event's schema in place of the notification's. */
  schema?: z.ZodType<{ id: string }> | undefined;
  /**
   * Let a body that passes the compiled envelope check through as the notification itself, without
   * zod's copy (default true). Off when something reads the body after the handler (a recorder), so a
   * handler that changes its notification does not change what is recorded.
   */
  fastAccept?: boolean;
  /**
   * The receiver's payload fingerprint: a body parsed here is fingerprinted at once, the digest's walk
   * doubling as its depth and key check, and the fingerprint goes on with it.
   */
  fingerprint?: Fingerprinter | undefined;
}

/** What intake learnt of a request; `headers` and `body` are set once read, for the recorder. */
export type Intake = {
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
} & (
  | {
      accepted: true;
      notification: SubscriptionNotification;
      body: Record<string, unknown>;
      headers: Record<string, string>;
      /** Which configured secret matched: above 0, an older one of a rotation still in use. */
      secretIndex?: number;
      /** With `authorizeSender`: the tenant the sender was authorized as, whose namespace the records go in. */
      tenant?: string;
      /** The payload's fingerprint, when taken here (`IntakeRules.fingerprint`). */
      fingerprint?: string;
    }
  | { accepted: false; refusal: Refusal }
);

/** An early answer: an outcome, or a reason the adapter gave (`Receiver.reject`). */
export type Refusal = Verdict | EarlyRejection;

/**
 * Method, size, content type, signature, JSON and schema, in that order: the request becomes either a
 * valid notification or the reason it is refused. No store, no handler, no answer yet.
 */
export async function intake(request: ReceiverRequest, rules: IntakeRules): Promise<Intake> {
  if (request.method !== "POST") {
    return {
      accepted: false,
      refusal: verdict("method_not_allowed", { reason: request.method }, { headers: { allow: "POST" } }),
    };
  }
  const bytes = request.rawBody;
  if (bytes && bytes.byteLength > rules.bodyLimit) return { accepted: false, refusal: "too_large" };

  const headers = normalizeHeaders(request.headers);
  const typeProblem = contentTypeProblem(headers["content-type"]);
  if (typeProblem) {
    // The sender's text: logged card-redacted and cut.
    const reason = shownText(headers["content-type"]!, MAX_REASON_SHOWN);
    return {
      accepted: false,
      headers,
      refusal: verdict("unsupported_media_type", { reason }, { message: typeProblem }),
    };
  }

  let body: Record<string, unknown>;
  let secretIndex: number | undefined;
  let fingerprint: string | undefined;
  /** Parsed here from the bytes: plain JSON data, which the compiled check was proven on. */
  let parsedHere = false;
  if (bytes) {
    if (rules.verify) {
      const checked = await checkSignature(bytes, headers, {
        verify: rules.verify,
        verifyTimeoutMs: rules.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS,
        explainSignatureFailures: rules.explainSignatureFailures ?? false,
        unavailableHeaders: rules.unavailableHeaders,
      });
      if (!checked.ok) return { accepted: false, headers, refusal: checked.refusal };
      secretIndex = checked.secretIndex;
    }
    const parsed = parseJsonText(bytes);
    if (!parsed.ok)
      return {
        accepted: false,
        headers,
        refusal: verdict("invalid", { reason: parsed.message }, { message: parsed.message }),
      };
    body = parsed.value;
    parsedHere = true;
    // One walk checks the body and takes its digest; a body it cannot vouch for (too deep, or holding a
    // key that pollutes) is walked again, cleaned, and fingerprinted later. Refused bodies pay the
    // digest too: it is the walk the check needs anyway.
    fingerprint = rules.fingerprint?.within(body, MAX_BODY_DEPTH);
    if (fingerprint === undefined && dropKeysOrTooDeep(body)) return { accepted: false, headers, refusal: tooDeep() };
  } else {
    if (rules.verify || request.parsedBody === undefined) return { accepted: false, headers, refusal: "body_consumed" };
    const parsed = request.parsedBody;
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      const message = "body must be a JSON object";
      return { accepted: false, headers, refusal: verdict("invalid", { reason: message }, { message }) };
    }
    if (valueNestsDeeperThan(parsed, MAX_BODY_DEPTH)) return { accepted: false, headers, refusal: tooDeep() };
    body = parsed as Record<string, unknown>;
  }

  // Most bodies are valid: the compiled check accepts them at a third of zod's cost. It never refuses
  // on its own: whatever it does not accept goes to zod, which decides and words the message.
  const fast = parsedHere && !rules.schema && rules.fastAccept !== false && passesEnvelopeCheck(body);

  // With an `eventSchema` the notification is that event: the later steps read its `id` and `event_type` only.
  const result = fast
    ? ({ success: true, data: body as SubscriptionNotification } as const)
    : ((rules.schema ?? subscriptionNotificationSchema).safeParse(
        body,
      ) as z.ZodSafeParseResult<SubscriptionNotification>);
  if (!result.success) {
    const message = validationMessage(result.error.issues);
    // The id failed validation too, perhaps for its length: never logged whole.
    const id = typeof body.id === "string" ? shownText(body.id, MAX_NOTIFICATION_ID_LENGTH) : undefined;
    return {
      accepted: false,
      headers,
      body,
      refusal: verdict("invalid", { notification_id: id, reason: message }, { message }),
    };
  }
  let tenant: string | undefined;
  if (rules.authorizeSender) {
    tenant = await authorizedTenant(result.data, () => rules.authorizeSender!(result.data, headers));
    if (tenant === undefined) {
      const id = shownText(result.data.id, MAX_NOTIFICATION_ID_LENGTH);
      return { accepted: false, headers, body, refusal: verdict("forbidden", { notification_id: id }) };
    }
  }
  return {
    accepted: true,
    headers,
    body,
    notification: result.data,
    ...(secretIndex ? { secretIndex } : {}),
    ...(tenant === undefined ? {} : { tenant }),
    ...(fingerprint === undefined ? {} : { fingerprint }),
  };
}

const tooDeep = () => verdict("invalid", { reason: TOO_DEEP_MESSAGE }, { message: TOO_DEEP_MESSAGE });

/**
 * The tenant a sender check authorized, or undefined for a refusal. A check that throws is a failed
 * check, not a crash. `true` authorizes the sender for the notification's own merchant, which is then
 * the tenant: a sender may spend ids only among its own merchants' records.
 */
async function authorizedTenant(
  notification: SubscriptionNotification,
  check: () => boolean | string | Promise<boolean | string>,
): Promise<string | undefined> {
  try {
    const answer = await check();
    if (answer === true) return notification.resource?.merchant_id ?? "";
    return typeof answer === "string" && answer !== "" ? answer : undefined;
  } catch {
    return undefined;
  }
}

/** One plain object with lower-case names, as `verify` hooks and handlers see the request headers. */
export function normalizeHeaders(source: HeaderSource): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (typeof (source as Headers).forEach === "function" && typeof (source as Headers).get === "function") {
    (source as Headers).forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  // Keys, not entries: no pair array per header. Node's names are lower-case already, which
  // `toLowerCase` sees without making a new string.
  const record = source as Exclude<HeaderSource, Headers>;
  const names = Object.keys(record);
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const value = record[name];
    if (value === undefined) continue;
    out[name.toLowerCase()] =
      typeof value === "string" ? value : Array.isArray(value) ? value.join(", ") : String(value);
  }
  return out;
}

/**
 * A notification is JSON. A missing content-type is tolerated (some senders omit it); a present one must
 * be `application/json` or a `+json` type, in UTF-8 when a charset is named.
 *
 * What is wrong with a content-type, as the 415 answer says it: the media type, or (for JSON in
 * another encoding) the charset, so a sender with `charset=latin1` is not told to send JSON it sends.
 */
function contentTypeProblem(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  // A sender sends the same content-type every time: its verdict is kept, not worked out per request.
  if (value === lastContentType.value) return lastContentType.problem;
  const problem = mediaTypeProblem(value);
  lastContentType.value = value;
  lastContentType.problem = problem;
  return problem;
}

const lastContentType: { value: string | undefined; problem: string | undefined } = {
  value: undefined,
  problem: undefined,
};

function mediaTypeProblem(value: string): string | undefined {
  const [type = "", ...params] = value.toLowerCase().split(";");
  const mime = type.trim();
  if (mime !== "application/json" && !(mime.startsWith("application/") && mime.endsWith("+json")))
    return "content-type must be application/json";
  for (const param of params) {
    const [name, charset] = param.split("=").map((part) => part.trim().replace(/^"|"$/g, ""));
    if (name === "charset" && charset !== "utf-8" && charset !== "utf8")
      return "charset must be utf-8: JSON notifications are UTF-8 (RFC 8259)";
  }
  return undefined;
}

interface SignatureRules {
  verify: VerifyHook;
  /** Past this the answer is 503 (`verify_timed_out`), so a stalled secret lookup does not hold connections. */
  verifyTimeoutMs: number;
  /** Name the reason code in the 401 answer's message. Off by default: the log has it. */
  explainSignatureFailures: boolean;
  /** Headers of a 503 answer (`Retry-After`). */
  unavailableHeaders?: Record<string, string> | undefined;
}

/** A passed check (with the rotated secret's index, if an older one matched), or the refusal to answer. */
type SignatureCheck = { ok: true; secretIndex: number } | { ok: false; refusal: Verdict };

/**
 * Run the verify hook within its time limit and turn a failure into a verdict whose log line says why
 * (`reason`, `detail`) and for which notification, when the unverified body parses far enough to say.
 */
async function checkSignature(
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
