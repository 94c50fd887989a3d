import { stdSerializers } from "pino";
import { redactNotification, redactText, type RedactOptions } from "./redact.js";

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
 */
export function redactErrorInPlace(err: unknown, options: RedactOptions): Error {
  const pii = options.pii ?? true;
  if (!(err instanceof Error)) return new Error(redactText(String(err), pii));
  try {
    err.message = redactText(err.message, pii);
    if (typeof err.stack === "string") err.stack = redactText(err.stack, pii);
  } catch {
    // A frozen error cannot be changed: store a redacted copy instead.
    const copy = new Error(redactText(err.message, pii));
    copy.name = err.name;
    copy.stack = typeof err.stack === "string" ? redactText(err.stack, pii) : copy.stack;
    return copy;
  }
  return err;
}
