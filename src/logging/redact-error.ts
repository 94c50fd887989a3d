import { stdSerializers } from "pino";
import { redactValues, sensitiveValuesOf } from "./known-values.js";
import { type RedactOptions, redactNotification, redactText } from "./redact.js";

/**
 * pino's `err` serializer followed by redaction: the message and stack (causes included) and any
 * properties an error carries (a payment client's request, say) lose their card and personal data.
 */
export function redactedErrorSerializer(options: RedactOptions): (err: unknown) => unknown {
  return (err) => redactNotification(err instanceof Error ? stdSerializers.err(err) : err, options);
}

/**
 * The error a handler threw, made safe to store: BullMQ keeps `message` as the job's `failedReason`
 * and `stack` in its `stacktrace`, for as long as the failed job is kept. The error is changed in
 * place, so its class (which BullMQ checks) is kept; anything thrown that is not an Error becomes one.
 * Given the notification, its personal and card values are also removed wherever they appear in the
 * text (a holder's name has no pattern to find it by).
 */
export function redactErrorInPlace(err: unknown, options: RedactOptions, notification?: unknown): Error {
  const pii = options.pii ?? true;
  // Names and addresses have no pattern: the notification's own values are looked for instead.
  const values = notification === undefined ? { values: [], words: [] } : sensitiveValuesOf(notification, pii);
  const redact = (text: string) => redactValues(redactText(text, pii), values);
  if (!(err instanceof Error)) return new Error(redact(String(err)));
  try {
    err.message = redact(err.message);
    if (typeof err.stack === "string") err.stack = redact(err.stack);
  } catch {
    // A frozen error cannot be changed: store a redacted copy instead.
    const copy = new Error(redact(err.message));
    copy.name = err.name;
    copy.stack = typeof err.stack === "string" ? redact(err.stack) : copy.stack;
    return copy;
  }
  return err;
}
