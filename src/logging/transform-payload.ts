import { holdsCardNumber, isCardNumber, REDACTED } from "./card-numbers.js";
import { isDigitsByNature, type KeyKind, kindOfKey } from "./sensitive-keys.js";

/**
 * Deeper than this, a value is replaced whole. Bodies deeper than `MAX_BODY_DEPTH` never get this far;
 * the bound is for whatever else is logged, and keeps the recursion finite.
 */
export const MAX_REDACT_DEPTH = 64;

/** What one walk over a payload does to the values it meets. */
export interface PayloadPolicy {
  /** A replacement for `value` under `key` (in an object under `parentKey`), or undefined to walk into it. */
  byKey(kind: KeyKind, key: string, parentKey: string, value: unknown): unknown;
  /** Strings, except under keys whose values are digit runs by nature (ids, times, phone numbers). */
  text(text: string): string;
  /** Integers of 13 digits or more that pass the Luhn check, except under those same keys. */
  cardNumber(value: number): unknown;
}

/** A deep copy of `value` with `policy` applied; the input is never modified. */
export function transformPayload(value: unknown, policy: PayloadPolicy): unknown {
  return walk(value, policy, "", 0);
}

/**
 * Under a key whose values are digit runs by nature, a value is kept as it is unless it is an id
 * holding a card number written as one (`holdsCardNumber`: `4111 1111 1111 1111`, `ref-4111111111111111`,
 * full-width or `%20`-split): an id that carries a card number is still a card number, and the whole
 * value is then scanned. Times and phone numbers are never taken for one.
 */
function skipsScan(key: string, value: string): boolean {
  if (!isDigitsByNature(kindOfKey(key))) return false;
  return !(key === "id" || key.endsWith("_id")) || !holdsCardNumber(value);
}

/** An id as it may be shown anywhere (a log line, a span): itself, unless it holds a card number. */
export const shownId = (id: string): string => (holdsCardNumber(id) ? REDACTED : id);

/**
 * A key is payload text too: one holding a card number is written as the policy writes such text, and
 * numbered when that meets a key already written (two card numbers masked alike), so no member is lost.
 */
function keyShown(key: string, policy: PayloadPolicy, written: Record<string, unknown>): string {
  if (!holdsCardNumber(key)) return key;
  const shown = policy.text(key);
  let free = shown;
  for (let n = 2; Object.hasOwn(written, free); n++) free = `${shown} (${n})`;
  return free;
}

function walk(value: unknown, policy: PayloadPolicy, key: string, depth: number): unknown {
  if (typeof value === "string") return skipsScan(key, value) ? value : policy.text(value);
  if (typeof value === "number") {
    return Number.isInteger(value) && value >= 1e12 && isCardNumber(String(value)) && !skipsScan(key, String(value))
      ? policy.cardNumber(value)
      : value;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_REDACT_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => walk(item, policy, key, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "__proto__") continue;
    const replaced = policy.byKey(kindOfKey(k), k, key, v);
    out[keyShown(k, policy, out)] = replaced === undefined ? walk(v, policy, k, depth + 1) : replaced;
  }
  return out;
}
