import { type Logger, pino } from "pino";
import { REDACTED, type RedactOptions, redactNotification } from "./redact.js";
import { redactedErrorSerializer } from "./redact-error.js";
import { redactingMessages } from "./redacting-messages.js";

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

/**
 * Card secrets logged directly at the top level or one object down (`log.info({ cvc })`). pino's paths
 * are exact, so the usual spellings are listed; anything under a payload key is matched in any case.
 */
const SECRET_KEYS = [
  "cvc",
  "cvv",
  "cvv2",
  "cvc2",
  "card_pwd",
  "card_md5",
  "card_hash",
  "card_number",
  "card_contract_id",
  "security_code",
  "pan",
];
const SPELLINGS = (key: string) => [
  key,
  key.toUpperCase(),
  key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
];
const SECRET_PATHS = [...new Set(SECRET_KEYS.flatMap(SPELLINGS))].flatMap((key) => [key, `*.${key}`]);

export function defaultLogger(): Logger {
  return pino({ name: "merchant-webhooks" });
}

/**
 * The logger handed to handlers as `ctx.log`: a child of the merchant's logger that redacts card data
 * and (by default) personal data in anything logged under the usual payload keys, in errors and in
 * message strings. Built once per
 * receiver because pino compiles redaction when a child is made.
 */
export function handlerLogger(base: Logger, options: RedactOptions): Logger {
  const redact = (value: unknown) => redactNotification(value, options);
  const serializers = {
    ...Object.fromEntries(PAYLOAD_KEYS.map((key) => [key, redact])),
    err: redactedErrorSerializer(options),
  };
  return redactingMessages(base.child({}, { serializers, redact: { paths: SECRET_PATHS, censor: REDACTED } }), options);
}

/**
 * The logger the library writes its own lines with: the merchant's, with errors redacted. A handler's
 * error often quotes the request it failed on, card number included.
 */
export function libraryLogger(base: Logger, options: RedactOptions): Logger {
  return base.child({}, { serializers: { err: redactedErrorSerializer(options) } });
}
