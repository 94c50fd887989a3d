import { OUTCOMES, type Outcome } from "../dispatch/outcomes.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import type { VerifyHook } from "../verify/verify-hook.js";
import type { Answer } from "./answer-and-log.js";
import { earlyVerdict } from "./answer-and-log.js";
import { type HeaderSource, intake } from "./intake.js";
import { DEFAULT_BODY_LIMIT } from "./options.js";

export interface ParseNotificationOptions {
  /** Checked on the exact bytes before anything is parsed, as the receiver's `verify`. */
  verify?: VerifyHook;
  /** Largest body accepted, in bytes. Default 256 KiB, as the receiver's. */
  bodyLimit?: number;
  /** Time the signature check may take (a secret function included); past it, 503. Default 5 s. */
  verifyTimeoutMs?: number;
  /** Name the signature failure's reason code in `err.answer` (it is always in `err.reason`). Default false. */
  explainSignatureFailures?: boolean;
}

const PARSE_OPTION_KEYS = {
  verify: true,
  bodyLimit: true,
  verifyTimeoutMs: true,
  explainSignatureFailures: true,
} as const satisfies KnownKeys<ParseNotificationOptions>;

/** The code of each refusal `parseNotification` can make; `reason` says more (which signature check failed). */
const REFUSAL_CODES: Partial<Record<Outcome, string>> = {
  invalid: "MW_NOTIFICATION_INVALID",
  unauthorized: "MW_SIGNATURE_FAILED",
  forbidden: "MW_SENDER_FORBIDDEN",
  too_large: "MW_BODY_TOO_LARGE",
  unsupported_media_type: "MW_UNSUPPORTED_MEDIA_TYPE",
  unavailable: "MW_SIGNATURE_TIMEOUT",
};

/**
 * Why `parseNotification` refused a delivery, with the answer a receiver would give: send `status`
 * and `answer` back as they are, and the sender keeps the notification and retries.
 */
export class NotificationError extends MerchantWebhooksError {
  override readonly name = "NotificationError";
  /** The HTTP status of the answer table: 400, 401, 413 or 415. */
  declare readonly status: number;
  /** The receiver's answer body, `{ processed: false, message }`: terse, safe to send back. */
  readonly answer: Answer;
  /**
   * A stable code for why: for a failed signature check one of `SIGNATURE_FAILURE_REASONS` (e.g.
   * `timestamp_outside_tolerance`, `no_signature_matched`); otherwise the outcome (`invalid`, `too_large`, ...).
   */
  readonly reason: string;
  /** What the reason means for this delivery, for your log; never a secret or an expected signature. */
  readonly detail: string | undefined;

  constructor(
    readonly outcome: Outcome,
    message: string,
    details: { reason?: string | undefined; detail?: string | undefined } = {},
  ) {
    // The error's own message (for your logs) has the detail; the answer (for the sender) stays terse.
    super(
      REFUSAL_CODES[outcome] ?? "MW_NOTIFICATION_REFUSED",
      details.detail ? `${message}: ${details.detail}` : message,
      {
        status: OUTCOMES[outcome].status,
      },
    );
    this.answer = { processed: false, message };
    this.reason = details.reason ?? outcome;
    this.detail = details.detail;
  }
}

const encoder = new TextEncoder();

/**
 * Verify (when `verify` is given), parse and validate one delivery, and return the typed notification;
 * throw a `NotificationError` otherwise. The receiver's own first steps, without claiming, dispatching
 * or answering: for frameworks without an adapter (Koa, NestJS, Hapi) and queue consumers. Pass the raw
 * bytes (or their text) exactly as received, or the signature check fails.
 */
export async function parseNotification(
  rawBody: Uint8Array | string,
  headers: HeaderSource,
  options: ParseNotificationOptions = {},
): Promise<SubscriptionNotification> {
  rejectUnknownKeys("parseNotification", options, Object.keys(PARSE_OPTION_KEYS));
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const bytes = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  const taken = await intake(
    { method: "POST", headers, rawBody: bytes },
    {
      bodyLimit,
      verify: options.verify,
      verifyTimeoutMs: options.verifyTimeoutMs,
      explainSignatureFailures: options.explainSignatureFailures,
    },
  );
  if (taken.accepted) return taken.notification;
  const refusal =
    typeof taken.refusal === "string"
      ? earlyVerdict(taken.refusal, { bodyLimit, bodyTimeoutMs: 0, verifies: options.verify !== undefined })
      : taken.refusal;
  // A signature failure carries its code and detail; other refusals are named by their outcome.
  const { reason, detail } = refusal.fields;
  throw new NotificationError(refusal.outcome, refusal.message ?? OUTCOMES[refusal.outcome].message, {
    reason: detail === undefined ? undefined : reason,
    detail,
  });
}
