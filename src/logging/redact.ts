/** Card verification data and card-number derivatives: never written anywhere, whatever the options. */
const CARD_SECRET_KEYS = new Set(["cvc", "cvv", "card_pwd", "card_md5", "card_hash", "card_number", "pan"]);

/**
 * Personal data of payers and subscribers, redacted by default. `name` is personal only under
 * `subscriber` (elsewhere it names products, items and taxes), so it is handled by path.
 */
const PII_KEYS = new Set([
  "email",
  "email_address",
  "phone_number",
  "payer_telephone_number",
  "ip",
  "payer_ip",
  "holder_name",
  "address",
  "payer_address",
  "billing_address",
  "platform_login_id",
  "payer_login_id",
]);

export const REDACTED = "[REDACTED]";

export interface RedactOptions {
  /** Also redact payer and subscriber personal data. Default true. */
  pii?: boolean;
}

/** 12 to 19 digits, optionally grouped by spaces or dashes: the shapes a primary account number takes. */
const PAN_CANDIDATE = /(?<![0-9])[0-9](?:[ -]?[0-9]){11,18}(?![0-9])/g;

function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Replace every card number inside a string. A digit run is treated as a card number when it has a
 * card's length and passes the Luhn check, so ids and timestamps of other lengths are left alone.
 */
export function redactCardNumbers(text: string): string {
  if (text.length < 12) return text;
  return text.replace(PAN_CANDIDATE, (match) => (isCardNumber(match.replace(/[ -]/g, "")) ? REDACTED : match));
}

function isCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && passesLuhn(digits);
}

/**
 * A deep copy of `value` with card secrets, card numbers and (by default) personal data replaced, for
 * anything that leaves the process: log lines and recordings. The input is never modified.
 */
export function redactNotification<T>(value: T, options: RedactOptions = {}): T {
  return redactValue(value, options.pii ?? true, "", 0) as T;
}

const MAX_DEPTH = 64;

/**
 * Ids and times are digit runs by nature (order ids, epoch times) and a card number does not belong in
 * them; scanning them would corrupt recordings that must replay through the schema.
 */
function isIdentifierKey(key: string): boolean {
  return key === "id" || key.endsWith("_id") || key.endsWith("_time") || key === "execution_phase";
}

function redactValue(value: unknown, pii: boolean, key: string, depth: number): unknown {
  if (typeof value === "string") return isIdentifierKey(key) ? value : redactCardNumbers(value);
  // A card number sent as a JSON number is still one; 13- and 14-digit numbers are epoch milliseconds.
  if (typeof value === "number") return Number.isInteger(value) && value >= 1e14 && isCardNumber(String(value)) ? REDACTED : value;
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, pii, key, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "__proto__") continue;
    if (CARD_SECRET_KEYS.has(k) || (pii && (PII_KEYS.has(k) || (key === "subscriber" && k === "name")))) {
      out[k] = REDACTED;
    } else {
      out[k] = redactValue(v, pii, k, depth + 1);
    }
  }
  return out;
}
