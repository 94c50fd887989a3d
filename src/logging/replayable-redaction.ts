import { redactCardText } from "./card-numbers.js";
import { MAX_REDACT_DEPTH, REDACTED, type RedactOptions, redactNotification } from "./redact.js";
import { keyShown } from "./transform-payload.js";

/** Stands in for a redacted email: still an email, so the recording passes the schema on replay. */
export const REDACTED_EMAIL = "redacted@redacted.invalid";
/** Stands in for a redacted `ip` (typed `ip` by the interface): the unspecified address. */
export const REDACTED_IP = "0.0.0.0";

const EMAIL_KEYS = new Set(["email", "email_address"]);

/**
 * `redactNotification` for recordings, which must stay valid replay sources: where a redacted field has
 * a format the schema checks, the marker is replaced by a value of that format (an email, an ip), and a
 * redacted object (an address) keeps its fields with each string redacted rather than becoming a
 * string. Card data is redacted exactly as in logs.
 */
export function redactForRecording(body: Record<string, unknown>, options: RedactOptions): Record<string, unknown> {
  const recorded = keepShapes(body, redactNotification(body, options), "", 0) as Record<string, unknown>;
  // The notification id is the record's key, kept as sent everywhere (docs/security.md): a card-like
  // run masked in it would replay as another notification, not as a duplicate of this one.
  return typeof body.id === "string" ? { ...recorded, id: body.id } : recorded;
}

/** Both walks stop where `redactNotification` does: deeper values are replaced whole. */
function keepShapes(original: unknown, redacted: unknown, key: string, depth: number): unknown {
  if (redacted === REDACTED) {
    if (typeof original === "string" && EMAIL_KEYS.has(key)) return REDACTED_EMAIL;
    if (typeof original === "string" && key === "ip") return REDACTED_IP;
    if (isObject(original)) return redactedShape(original, depth);
    return REDACTED;
  }
  if (depth >= MAX_REDACT_DEPTH) return REDACTED;
  if (Array.isArray(original) && Array.isArray(redacted))
    return redacted.map((item, i) => keepShapes(original[i], item, key, depth + 1));
  if (isObject(original) && isObject(redacted)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(redacted)) out[k] = keepShapes(original[k], v, k, depth + 1);
    return out;
  }
  return redacted;
}

/** The object's keys with every string value redacted; other values, which could identify too, dropped. */
function redactedShape(original: Record<string, unknown>, depth: number): Record<string, unknown> | string {
  if (depth >= MAX_REDACT_DEPTH) return REDACTED;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(original)) {
    if (k === "__proto__") continue;
    const key = keyShown(k, redactCardText, out, original);
    if (typeof v === "string") out[key] = REDACTED;
    else if (isObject(v)) out[key] = redactedShape(v, depth + 1);
  }
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);
