import type { Answer } from "../answer/answer.js";
import { OUTCOMES, type Outcome } from "../answer/outcomes.js";
import type { SubscriptionNotification } from "../schema/index.js";
import type { VerifyHook } from "../verify/verify-hook.js";
import { earlyVerdict } from "./early-verdicts.js";
import type { HeaderSource } from "./headers.js";
import { intake } from "./intake.js";
import { DEFAULT_BODY_LIMIT } from "./options.js";

export interface ParseNotificationOptions {
  /** Checked on the exact bytes before anything is parsed, as the receiver's `verify`. */
  verify?: VerifyHook;
  /** Largest body accepted, in bytes. Default 256 KiB, as the receiver's. */
  bodyLimit?: number;
}

/**
 * Why `parseNotification` refused a delivery, with the answer a receiver would give: send `status`
 * and `answer` back as they are, and the sender keeps the notification and retries.
 */
export class NotificationError extends Error {
  override readonly name = "NotificationError";
  /** The HTTP status of the answer table: 400, 401, 413 or 415. */
  readonly status: number;
  /** The receiver's answer body, `{ processed: false, message }`. */
  readonly answer: Answer;

  constructor(
    readonly outcome: Outcome,
    message: string,
  ) {
    super(message);
    this.status = OUTCOMES[outcome].status;
    this.answer = { processed: false, message };
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
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const bytes = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  const taken = await intake({ method: "POST", headers, rawBody: bytes }, { bodyLimit, verify: options.verify });
  if (taken.accepted) return taken.notification;
  const refusal =
    typeof taken.refusal === "string"
      ? earlyVerdict(taken.refusal, { bodyLimit, bodyTimeoutMs: 0, verifies: options.verify !== undefined })
      : taken.refusal;
  throw new NotificationError(refusal.outcome, refusal.message ?? OUTCOMES[refusal.outcome].message);
}
