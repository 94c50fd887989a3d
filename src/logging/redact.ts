import { REDACTED, redactCardNumbers, redactCardText } from "./card-numbers.js";
import { redactPersonalText } from "./personal-text.js";
import { isCardKind } from "./sensitive-keys.js";
import { MAX_REDACT_DEPTH, type PayloadPolicy, transformPayload } from "./transform-payload.js";

export { MAX_REDACT_DEPTH, REDACTED, redactCardNumbers, redactCardText };

export interface RedactOptions {
  /** Also redact payer and subscriber personal data, and emails and IPs found in any text. Default true. */
  pii?: boolean;
}

/** Card data, and with `pii` emails and IPs, inside one string. */
export function redactText(text: string, pii: boolean): string {
  const cards = redactCardText(text);
  return pii ? redactPersonalText(cards) : cards;
}

function redactionPolicy(pii: boolean): PayloadPolicy {
  return {
    // `name` is personal only under `subscriber`; elsewhere it names products, items and taxes.
    byKey: (kind, key, parentKey) =>
      isCardKind(kind) ||
      (pii && (kind === "personal" || kind === "phone" || (parentKey === "subscriber" && key === "name")))
        ? REDACTED
        : undefined,
    text: (text) => redactText(text, pii),
    cardNumber: () => REDACTED,
  };
}
const POLICIES = { pii: redactionPolicy(true), cardsOnly: redactionPolicy(false) };

/**
 * A deep copy of `value` with card secrets, card numbers and (by default) personal data replaced, for
 * anything that leaves the process: log lines and recordings. The input is never modified.
 */
export function redactNotification<T>(value: T, options: RedactOptions = {}): T {
  return transformPayload(value, (options.pii ?? true) ? POLICIES.pii : POLICIES.cardsOnly) as T;
}
