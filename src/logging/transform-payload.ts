import { holdsCardNumber, REDACTED } from "./card-numbers.js";
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
  /** Strings, and keys holding a card number; under keys whose values are digit runs by nature (ids, times, phone numbers), only those holding one. */
  text(text: string): string;
  /** Numbers holding a card number by their absolute value, under any key. */
  cardNumber(value: number): unknown;
}

/** A deep copy of `value` with `policy` applied; the input is never modified. */
export function transformPayload(value: unknown, policy: PayloadPolicy): unknown {
  return walk(value, policy, "", 0);
}

/**
 * Under a key whose values are digit runs by nature (ids, times, phone numbers), a value that holds no
 * card number is kept whole, personal-data patterns and all: only a value holding one goes to the text
 * policy. Elsewhere every string does. An id is scanned like any text (`ORD<card>`, `<card>-01`), for
 * cards written as cards are: an id's digit groups joined by single dashes (`ORD-20269728-05552128`)
 * are its own, and not taken for a card retyped in pieces.
 */
function shownString(key: string, value: string, policy: PayloadPolicy): string {
  if (isDigitsByNature(kindOfKey(key)) && !holdsCardNumber(value, "printed")) return value;
  return policy.text(value);
}

/**
 * A JSON number that holds a card number by its absolute value, fractional or not (`-4111111111111111`,
 * `4111111111111.111`, `0.4111111111111111`): numbers below 10^12 hold none unless fractional.
 */
function holdsCardNumberValue(value: number): boolean {
  if (!Number.isFinite(value) || (Math.abs(value) < 1e12 && Number.isInteger(value))) return false;
  return holdsCardNumber(String(Math.abs(value)));
}

/** An id as it may be shown anywhere (a log line, a span): itself, unless it holds a card number. */
export const shownId = (id: string): string => (holdsCardNumber(id, "printed") ? REDACTED : id);

/**
 * A key is payload text too: one holding a card number is written as `text` writes such text, under
 * a name that neither a member already written nor any member of `original` has (numbered, `… (2)`),
 * so a masked key never overwrites a member, nor a real member a masked one.
 */
export function keyShown(
  key: string,
  text: (text: string) => string,
  written: Record<string, unknown>,
  original: object,
): string {
  if (!holdsCardNumber(key)) return key;
  const shown = text(key);
  if (shown === key) return key;
  let free = shown;
  for (let n = 2; Object.hasOwn(written, free) || Object.hasOwn(original, free); n++) free = `${shown} (${n})`;
  return free;
}

function walk(value: unknown, policy: PayloadPolicy, key: string, depth: number): unknown {
  if (typeof value === "string") return shownString(key, value, policy);
  if (typeof value === "number") return holdsCardNumberValue(value) ? policy.cardNumber(value) : value;
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_REDACT_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => walk(item, policy, key, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "__proto__") continue;
    const replaced = policy.byKey(kindOfKey(k), k, key, v);
    out[keyShown(k, policy.text, out, value)] = replaced === undefined ? walk(v, policy, k, depth + 1) : replaced;
  }
  return out;
}
