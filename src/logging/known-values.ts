import { REDACTED } from "./card-numbers.js";
import { isCardKind } from "./sensitive-keys.js";
import { transformPayload } from "./transform-payload.js";

/** Values shorter than this are too common to replace in free text (`"M"`, `"DE"`). */
const MIN_LENGTH = 3;
const MAX_LENGTH = 256;
const MAX_VALUES = 64;

/**
 * The personal and card values a notification carries (a holder's name, an email, an address line, a
 * card number or contract id), to find again in free text no pattern recognises: an error message
 * that says "declined for Ada Example". Card values always; personal ones with `pii`.
 */
export function sensitiveValuesOf(notification: unknown, pii: boolean): string[] {
  const found = new Set<string>();
  const collect = (value: unknown): void => {
    if (found.size >= MAX_VALUES) return;
    if (typeof value === "string" || typeof value === "number") {
      const text = String(value).trim();
      if (text.length >= MIN_LENGTH && text.length <= MAX_LENGTH && text !== REDACTED) found.add(text);
    } else if (Array.isArray(value)) value.forEach(collect);
    else if (value !== null && typeof value === "object") Object.values(value).forEach(collect);
  };
  transformPayload(notification, {
    byKey: (kind, key, parentKey, value) => {
      const personal = kind === "personal" || kind === "phone" || (parentKey === "subscriber" && key === "name");
      if (isCardKind(kind) || (pii && personal)) collect(value);
      return undefined;
    },
    text: (text) => text,
    cardNumber: (value) => value,
  });
  return [...found];
}

/** `text` with every occurrence of `values` replaced, in any letter case. */
export function redactValues(text: string, values: readonly string[]): string {
  if (values.length === 0 || text.length === 0) return text;
  const pattern = [...values]
    .sort((a, b) => b.length - a.length)
    .map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("|");
  return text.replace(new RegExp(pattern, "gi"), REDACTED);
}
