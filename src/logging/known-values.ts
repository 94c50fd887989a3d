import { REDACTED } from "./card-numbers.js";
import { isCardKind } from "./sensitive-keys.js";
import { transformPayload } from "./transform-payload.js";

/** Values shorter than this are too common to replace in free text (`"M"`, `"DE"`). */
const MIN_LENGTH = 3;
const MAX_LENGTH = 256;
const MAX_VALUES = 64;

/** What of a notification to look for in free text: whole values, and the words of people's names. */
export interface SensitiveValues {
  /** Found anywhere, in any letter case: an email, an address line, a card number, a whole name. */
  values: string[];
  /**
   * Each word of a holder's or subscriber's name, found as a whole word (not inside a longer one) in
   * any letter case, also percent-encoded: so the name is found reversed (`Lovelace, Ada`), spaced
   * otherwise (`Ada  Lovelace`, `Ada%20Lovelace`, `Ada+Lovelace`) or cut to the surname alone.
   */
  words: string[];
}

/** Particles of names, too common as words of a sentence to replace wherever they appear. */
const PARTICLES = new Set([
  "de",
  "da",
  "di",
  "do",
  "du",
  "del",
  "della",
  "der",
  "den",
  "van",
  "von",
  "la",
  "le",
  "el",
  "al",
  "bin",
  "ibn",
  "y",
  "e",
]);
/** `holder_name`, `holderName`, `HolderName`: the card holder's name, as the key spells it. */
const HOLDER_NAME = /^holder[_-]?name$/i;
const NAME_WORD = /[\p{L}\p{M}][\p{L}\p{M}'’-]*/gu;

/**
 * The personal and card values a notification carries (a holder's name, an email, an address line, a
 * card number or contract id), to find again in free text no pattern recognises: an error message
 * that says "declined for Ada Example", or "Example, Ada", or only "Example". Card values always;
 * personal ones with `pii`.
 */
export function sensitiveValuesOf(notification: unknown, pii: boolean): SensitiveValues {
  const found = new Set<string>();
  const words = new Set<string>();
  const collect = (value: unknown): void => {
    if (found.size >= MAX_VALUES) return;
    if (typeof value === "string" || typeof value === "number") {
      const text = String(value).trim();
      if (text.length >= MIN_LENGTH && text.length <= MAX_LENGTH && text !== REDACTED) found.add(text);
    } else if (Array.isArray(value)) value.forEach(collect);
    else if (value !== null && typeof value === "object") Object.values(value).forEach(collect);
  };
  const collectWords = (value: unknown): void => {
    if (typeof value !== "string" || value.length > MAX_LENGTH) return;
    for (const [word] of value.matchAll(NAME_WORD)) {
      if (words.size >= MAX_VALUES || word.length < 2 || PARTICLES.has(word.toLowerCase())) continue;
      words.add(word);
      const encoded = encodeURIComponent(word);
      if (encoded !== word) words.add(encoded);
    }
  };
  transformPayload(notification, {
    byKey: (kind, key, parentKey, value) => {
      const name = (parentKey === "subscriber" && key === "name") || HOLDER_NAME.test(key);
      const personal = kind === "personal" || kind === "phone" || name;
      if (isCardKind(kind) || (pii && personal)) collect(value);
      if (pii && name) collectWords(value);
      return undefined;
    },
    text: (text) => text,
    cardNumber: (value) => value,
  });
  return { values: [...found], words: [...words] };
}

const escaped = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const longestFirst = (values: readonly string[]) => [...values].sort((a, b) => b.length - a.length);

/** `text` with every occurrence of the values, and every name word standing as a word, replaced, in any letter case. */
export function redactValues(text: string, { values, words }: SensitiveValues): string {
  if ((values.length === 0 && words.length === 0) || text.length === 0) return text;
  const parts = values.length > 0 ? [longestFirst(values).map(escaped).join("|")] : [];
  // A letter on either side makes it part of another word ("Ada" in "adapter"); digits do not (`%20Lovelace`).
  if (words.length > 0)
    parts.push(`(?<![\\p{L}\\p{M}])(?:${longestFirst(words).map(escaped).join("|")})(?![\\p{L}\\p{M}])`);
  return text.replace(new RegExp(parts.join("|"), "giu"), REDACTED);
}
