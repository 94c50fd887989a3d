import { pino, type Logger } from "pino";
import { REDACTED, redactNotification, type RedactOptions } from "./redact.js";

export type { Logger };

/** Keys under which handlers usually log a notification or a part of it; each is deep-redacted. */
const PAYLOAD_KEYS = [
  "notification",
  "payload",
  "body",
  "resource",
  "payment_detail",
  "renewal_event",
  "subscription_event",
  "card_info",
  "subscriber",
  "data",
];

/** Card secrets logged directly at the top level or one object down (`log.info({ cvc })`). */
const SECRET_PATHS = ["cvc", "card_pwd", "card_md5", "card_hash", "*.cvc", "*.card_pwd", "*.card_md5", "*.card_hash"];

export function defaultLogger(): Logger {
  return pino({ name: "merchant-webhooks" });
}

/**
 * The logger handed to handlers as `ctx.log`: a child of the merchant's logger that redacts card data
 * and (by default) personal data in anything logged under the usual payload keys. Built once per
 * receiver because pino compiles redaction when a child is made.
 */
export function handlerLogger(base: Logger, options: RedactOptions): Logger {
  const redact = (value: unknown) => redactNotification(value, options);
  const serializers = Object.fromEntries(PAYLOAD_KEYS.map((key) => [key, redact]));
  return base.child({}, { serializers, redact: { paths: SECRET_PATHS, censor: REDACTED } });
}
