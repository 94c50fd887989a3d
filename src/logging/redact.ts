import { isCardNumber, REDACTED, redactCardNumbers, redactCardText } from "./card-numbers.js";
import { kindOfKey } from "./sensitive-keys.js";
import { redactPersonalText } from "./personal-text.js";

export { REDACTED, redactCardNumbers, redactCardText };

export interface RedactOptions {
  /** Also redact payer and subscriber personal data, and emails and IPs found in any text. Default true. */
  pii?: boolean;
}

/**
 * Deeper than this, a value is replaced whole. Bodies deeper than `MAX_BODY_DEPTH` never get this far;
 * the bound is for whatever else is logged, and keeps the recursion finite.
 */
export const MAX_REDACT_DEPTH = 64;

/** Card data, and with `pii` emails and IPs, inside one string. */
export function redactText(text: string, pii: boolean): string {
  const cards = redactCardText(text);
  return pii ? redactPersonalText(cards) : cards;
}

/**
 * A deep copy of `value` with card secrets, card numbers and (by default) personal data replaced, for
 * anything that leaves the process: log lines and recordings. The input is never modified.
 */
export function redactNotification<T>(value: T, options: RedactOptions = {}): T {
  return redactValue(value, options.pii ?? true, "", 0) as T;
}

function redactValue(value: unknown, pii: boolean, key: string, depth: number): unknown {
  if (typeof value === "string") return kindOfKey(key) === "identifier" ? value : redactText(value, pii);
  // A card number sent as a JSON number is still one.
  if (typeof value === "number") return Number.isInteger(value) && value >= 1e12 && kindOfKey(key) !== "identifier" && isCardNumber(String(value)) ? REDACTED : value;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_REDACT_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, pii, key, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "__proto__") continue;
    const kind = kindOfKey(k);
    if (kind === "card_secret" || (pii && (kind === "personal" || (key === "subscriber" && k === "name")))) out[k] = REDACTED;
    else out[k] = redactValue(v, pii, k, depth + 1);
  }
  return out;
}
