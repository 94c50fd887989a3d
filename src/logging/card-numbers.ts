export const REDACTED = "[REDACTED]";

const MIN_PAN = 13;
export const MAX_PAN = 19;

/**
 * The one card scanner: every place that writes data down (job data, recordings, logs, error text,
 * the console, key names) finds card numbers through `findCards`, so a form one path catches no other
 * path misses.
 *
 * The text is read as a stream of characters after undoing the encodings a card number travels in:
 * percent escapes (`%2D`, `%E2%80%8B`, `%34`), HTML character references (`&nbsp;`, `&#45;`, `&#x2d;`)
 * and JSON escapes (`\n`, `\u2011`). Each character is then a digit (any Unicode decimal digit, by its
 * value: Arabic-Indic, Devanagari, full-width...), a letter (which ends a run of digits), or a
 * separator (anything else: spaces, dashes, format characters such as a soft hyphen or a zero-width
 * space, `+`, `:`, `|`, brackets, newlines). Digits with separators between them form one run.
 *
 * In a run, 13 to 19 digits are a card number when they pass the Luhn check, begin as a card
 * network's numbers do (`plausibleIssuer`), and are written as a card is:
 * - whole: one group of digits, all of it (`4111111111111111`, `ORD4111111111111111`);
 * - grouped as cards are printed, across any separators: fours with a shorter last group, or four-six
 *   and the rest (`4111 - 1111 - 1111 - 1111`, `(4111)(1111)(1111)(1111)`, `3782 822463 10005`); with
 *   two breaks or more the first group may be glued to other digits (`ref 125555 5555 5555 4444`);
 * - or in whole groups of any length split by one or two white space or format characters, as people
 *   retype a number (`41 1111111 111 11111`).
 * Other digit runs (times, dates, amounts, lists, phone numbers, a 20-digit order number) are left
 * alone: those rules keep the false positives to the rare number that is written exactly as a card.
 */
interface Digit {
  /** The digit's value, `0` to `9`. */
  value: number;
  /** Where it came from in the text: `[from, to)`. */
  from: number;
  to: number;
  /** The separators before it, since the previous digit of the run: 0 none, else `GAP_TIGHT` or `GAP_LOOSE`. */
  gap: number;
  /** The character before the run's first digit was a `+` (a phone number's). */
  plus: boolean;
}

const GAP_NONE = 0;
const GAP_TIGHT = 1;
const GAP_LOOSE = 2;

/** A card number found in a text: `[from, to)` of the original text, and its ASCII digits. */
export interface FoundCard {
  from: number;
  to: number;
  digits: string;
}

const KIND_LETTER = -1;
const KIND_SEPARATOR = -2;
/**
 * A separator that may join a retyped number's groups: white space or a format character. Not a dash:
 * ids and dates join their own groups with dashes (`ORD-20261201-00012345`), and one in ten would pass.
 */
const KIND_SOFT = -3;

const kindCache = new Map<number, number>();
const DECIMAL = /^\p{Nd}$/u;
const WORDLIKE = /^[\p{L}\p{M}\p{Nl}\p{No}]$/u;
const SOFT = /^[\s\p{Cf}]$/u;

/** A code point's kind: its digit value (0-9), `KIND_LETTER`, `KIND_SEPARATOR` or `KIND_SOFT`. */
function kindOf(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) return KIND_LETTER;
  if (code < 128) {
    return code === 32 || (code >= 9 && code <= 13) ? KIND_SOFT : KIND_SEPARATOR;
  }
  const cached = kindCache.get(code);
  if (cached !== undefined) return cached;
  const char = String.fromCodePoint(code);
  let kind: number;
  if (DECIMAL.test(char)) {
    // Unicode lays decimal digits out as runs of ten from zero: the value is the count back to the run's start.
    let zero = code;
    while (zero > 0 && DECIMAL.test(String.fromCodePoint(zero - 1))) zero--;
    kind = (code - zero) % 10;
  } else if (WORDLIKE.test(char)) kind = KIND_LETTER;
  else kind = SOFT.test(char) ? KIND_SOFT : KIND_SEPARATOR;
  if (kindCache.size < 4_096) kindCache.set(code, kind);
  return kind;
}

const hexValue = (code: number): number =>
  code >= 48 && code <= 57
    ? code - 48
    : code >= 65 && code <= 70
      ? code - 55
      : code >= 97 && code <= 102
        ? code - 87
        : -1;

/** The byte of a `%XX` escape at `at`, or -1. */
function percentByte(text: string, at: number): number {
  if (text.charCodeAt(at) !== 37 || at + 2 >= text.length) return -1;
  const high = hexValue(text.charCodeAt(at + 1));
  const low = hexValue(text.charCodeAt(at + 2));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

/** A decoded character: its code point and where the encoded form ends. */
interface Decoded {
  code: number;
  end: number;
}

/** A percent-escaped character (UTF-8, one to four escapes) at `at`, or undefined. */
function percentDecoded(text: string, at: number): Decoded | undefined {
  const first = percentByte(text, at);
  if (first < 0) return undefined;
  if (first < 0x80) return { code: first, end: at + 3 };
  const more = first >= 0xf0 ? 3 : first >= 0xe0 ? 2 : first >= 0xc0 ? 1 : -1;
  if (more < 0) return undefined;
  let code = first & (0x3f >> more);
  let end = at + 3;
  for (let i = 0; i < more; i++, end += 3) {
    const next = percentByte(text, end);
    if (next < 0x80 || next >= 0xc0) return undefined;
    code = code * 64 + (next & 0x3f);
  }
  return code <= 0x10ffff ? { code, end } : undefined;
}

const NUMERIC_REFERENCE = /^&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));/;
const NAMED_REFERENCE = /^&[A-Za-z][A-Za-z0-9]{1,31};/;

/**
 * An HTML character reference at `at`, or undefined. A named one is taken for a separator, whatever
 * it names: HTML names no digit, and a card number split by `&nbsp;` or `&ndash;` is still one.
 */
function referenceDecoded(text: string, at: number): Decoded | undefined {
  const head = text.slice(at, at + 34);
  const numeric = NUMERIC_REFERENCE.exec(head);
  if (numeric) {
    const code = numeric[1] !== undefined ? Number.parseInt(numeric[1], 16) : Number(numeric[2]);
    return code <= 0x10ffff ? { code, end: at + numeric[0].length } : undefined;
  }
  const named = NAMED_REFERENCE.exec(head);
  return named ? { code: 0x20, end: at + named[0].length } : undefined;
}

/** A JSON escape at `at` (`\n`, `\t`, `\uXXXX`...), as error text quoting JSON carries it, or undefined. */
function escapeDecoded(text: string, at: number): Decoded | undefined {
  const next = text.charCodeAt(at + 1);
  if (next === 110 || next === 114 || next === 116 || next === 102 || next === 98) return { code: 10, end: at + 2 };
  if (next !== 117) return undefined;
  let code = 0;
  for (let i = 2; i < 6; i++) {
    const value = hexValue(text.charCodeAt(at + i));
    if (value < 0) return undefined;
    code = code * 16 + value;
  }
  return { code, end: at + 6 };
}

/**
 * Whether `text` can hold a card number at all: 13 characters that are digits or could encode one
 * (`%`, `&`, `\`, anything outside ASCII). Settles most text in one cheap pass.
 */
function mayHoldCard(text: string): boolean {
  if (text.length < MIN_PAN) return false;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code >= 48 && code <= 57) || code === 37 || code === 38 || code === 92 || code >= 128) {
      if (++count >= MIN_PAN) return true;
    }
  }
  return false;
}

/**
 * Which cards `findCards` looks for: `all`, or only those `printed` as cards are (whole, or grouped as
 * printed), for values whose digit groups are their own, such as ids.
 */
export type CardForms = "all" | "printed";

/** Every card number in `text`, in order, not overlapping. */
export function findCards(text: string, forms: CardForms = "all"): FoundCard[] {
  if (!mayHoldCard(text)) return [];
  const found: FoundCard[] = [];
  let run: Digit[] = [];
  let gap = GAP_NONE;
  let gapLength = 0;
  let plus = false;
  const endRun = () => {
    if (run.length >= MIN_PAN) cardsInRun(run, forms, found);
    run = [];
    gap = GAP_NONE;
    gapLength = 0;
  };
  let i = 0;
  while (i < text.length) {
    let code = text.charCodeAt(i);
    let end = i + 1;
    if (code === 37 || code === 38 || code === 92) {
      const decoded =
        code === 37 ? percentDecoded(text, i) : code === 38 ? referenceDecoded(text, i) : escapeDecoded(text, i);
      if (decoded) {
        code = decoded.code;
        end = decoded.end;
      }
    } else if (code >= 0xd800 && code <= 0xdbff) {
      code = text.codePointAt(i)!;
      end = code > 0xffff ? i + 2 : i + 1;
    }
    const kind = kindOf(code);
    if (kind >= 0) {
      if (run.length === 0) gap = GAP_NONE;
      run.push({ value: kind, from: i, to: end, gap: run.length === 0 ? GAP_NONE : gap, plus });
      gap = GAP_NONE;
      gapLength = 0;
      plus = false;
    } else if (kind === KIND_LETTER) {
      endRun();
      plus = false;
    } else {
      gapLength++;
      gap = kind === KIND_SOFT && gapLength <= 2 && gap !== GAP_LOOSE ? GAP_TIGHT : GAP_LOOSE;
      plus = code === 43 && run.length === 0 ? true : run.length === 0 ? false : plus;
    }
    i = end;
  }
  endRun();
  return found;
}

/** Pushes the card numbers of one run of digits onto `found`. */
function cardsInRun(run: readonly Digit[], forms: CardForms, found: FoundCard[]): void {
  const n = run.length;
  const values = run.map((d) => d.value);
  // Where each group of digits starts and ends (digit indices), and whether a card may begin there.
  const groupStart: boolean[] = run.map((d, i) => i === 0 || d.gap !== GAP_NONE);
  const groupEnd = (i: number) => i === n || run[i]!.gap !== GAP_NONE;
  const covered = new Array<boolean>(n).fill(false);
  const spans: Array<[number, number]> = [];
  const take = (s: number, e: number) => {
    for (let k = s; k < e; k++) covered[k] = true;
    spans.push([s, e]);
  };
  // Cards written as cards are first, longest first at each start; then retyped ones over what is left.
  for (let s = 0; s + MIN_PAN <= n; s++) {
    for (let len = Math.min(MAX_PAN, n - s); len >= MIN_PAN; len--) {
      if (covered[s] || !plausibleIssuer(values, s, len) || !passesLuhn(values, s, s + len)) continue;
      if (printedAsCard(run, s, len, groupStart[s]!, groupEnd(s + len))) {
        take(s, s + len);
        break;
      }
    }
  }
  for (let s = 0; forms === "all" && s + MIN_PAN <= n; s++) {
    if (!groupStart[s] || covered[s] || run[s]!.plus) continue;
    for (let len = Math.min(MAX_PAN, n - s); len >= MIN_PAN; len--) {
      const e = s + len;
      if (!groupEnd(e) || !plausibleIssuer(values, s, len) || !passesLuhn(values, s, e)) continue;
      let retyped = true;
      for (let k = s + 1; k < e && retyped; k++) retyped = !covered[k] && run[k]!.gap !== GAP_LOOSE;
      if (retyped) {
        take(s, e);
        break;
      }
    }
  }
  spans.sort((a, b) => a[0] - b[0]);
  let last: FoundCard | undefined;
  for (const [s, e] of spans) {
    const digits = values.slice(s, e).join("");
    if (last && run[s]!.from < last.to) {
      last.to = Math.max(last.to, run[e - 1]!.to);
      last.digits += digits;
      continue;
    }
    last = { from: run[s]!.from, to: run[e - 1]!.to, digits };
    found.push(last);
  }
}

/**
 * Whether the `len` digits from `s` are written as a card: one whole group, or broken exactly where
 * printed cards are (every fourth digit; or after the 4th and 10th), in which case, with two breaks
 * or more, the first group may be glued to other digits (`ref 125555 5555 5555 4444`). It ends where
 * a group does: the digits of a longer number printed as cards are (an Amex's 15) hold no shorter card.
 */
function printedAsCard(run: readonly Digit[], s: number, len: number, startsGroup: boolean, endsGroup: boolean) {
  let breaks = 0;
  let fours = true;
  let amex = len >= 14 && len <= 16;
  for (let k = 1; k < len; k++) {
    const broken = run[s + k]!.gap !== GAP_NONE;
    if (!broken) {
      if (k % 4 === 0) fours = false;
      if (k === 4 || k === 10) amex = false;
      continue;
    }
    breaks++;
    if (k % 4 !== 0) fours = false;
    if (k !== 4 && k !== 10) amex = false;
  }
  if (!endsGroup) return false;
  if (breaks === 0) return startsGroup && !run[s]!.plus;
  if (!fours && !amex) return false;
  return breaks >= 2 || startsGroup;
}

/** Luhn check over `values[start, end)`. */
function passesLuhn(values: readonly number[], start: number, end: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = end - 1; i >= start; i--) {
    let d = values[i]!;
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
 * The first digits of the card networks' numbers: 2 to 6 (Visa, Mastercard, American Express,
 * Discover, Diners, JCB, UnionPay, Maestro, Mir), 7 and 9 (fleet and domestic schemes such as Troy),
 * 81 and 82 (UnionPay, RuPay), and 1 only for UATP's 15 digits: so epoch times in ms, µs and ns
 * (13, 16 and 19 digits from 1) are never taken for one.
 */
function plausibleIssuer(values: readonly number[], start: number, len: number): boolean {
  const first = values[start]!;
  if (first >= 2 && first <= 7) return true;
  if (first === 9) return true;
  if (first === 8) return values[start + 1] === 1 || values[start + 1] === 2;
  return first === 1 && len === 15;
}

/** Whether `digits` (ASCII) is a card number's length and passes the Luhn check. */
export function isCardNumber(digits: string): boolean {
  if (digits.length < MIN_PAN || digits.length > MAX_PAN || !/^[0-9]+$/.test(digits)) return false;
  return passesLuhn([...digits].map(Number), 0, digits.length);
}

/** Whether `text` holds a card number in the `forms` `findCards` knows. */
export function holdsCardNumber(text: string, forms: CardForms = "all"): boolean {
  return findCards(text, forms).length > 0;
}

/**
 * Replace every card number inside a string. Digit runs are card numbers only where written as cards
 * and passing the Luhn check, so ordinary amounts, dates and ids are left alone.
 */
export function redactCardNumbers(text: string): string {
  return replaceCardNumbers(text, () => REDACTED);
}

/** Every card number inside a string masked as `maskCardNumber` does: for handlers, not for logs. */
export function maskCardNumbers(text: string): string {
  return replaceCardNumbers(text, maskCardNumber);
}

function replaceCardNumbers(text: string, replacement: (pan: string) => string): string {
  const cards = findCards(text);
  if (cards.length === 0) return text;
  let out = "";
  let copied = 0;
  for (const card of cards) {
    out += text.slice(copied, card.from) + replacement(card.digits);
    copied = card.to;
  }
  return out + text.slice(copied);
}

/**
 * The first six and last four digits with the rest starred (`411111******1111`), the most PCI DSS lets
 * be shown; anything with fewer than 13 digits shows none.
 */
export function maskCardNumber(text: string): string {
  const digits = text.replace(/[^0-9]/g, "");
  if (digits.length < MIN_PAN) return REDACTED;
  return `${digits.slice(0, 6)}${"*".repeat(digits.length - 10)}${digits.slice(-4)}`;
}

/**
 * Card verification data written into free text next to its name (`cvv: 123`, `cvv is 321`,
 * `card_cvv=123`, `cardCvc 123`): the name, then up to a few separators or linking words, then three
 * or four digits in any script. Bounded quantifiers only, so the scan is linear.
 */
/** `word` in any letter case, without the `i` flag (which would also fold the camel-case checks). */
const anyCase = (word: string) => [...word].map((c) => `[${c.toUpperCase()}${c}]`).join("");
const NAME = [
  // Rare as letters of other words: found anywhere, so `card_cvv`, `cardCvc` and `CVV2` are found too.
  ...["cvc", "cvv", "cvn", "csc", "cvd"].map(anyCase),
  // Common inside other words (`incident`, `shipping`): only as a word of their own or a camel-case part.
  `(?<![A-Za-z])(?:${["cid", "cav", "pin"].map(anyCase).join("|")})`,
  "(?<=[a-z])(?:Cid|CID|Cav|CAV|Pin|PIN)",
  `${anyCase("card")}[ _-]?(?:${anyCase("pwd")}|${anyCase("password")})`,
  `${anyCase("security")}[ _-]?${anyCase("code")}`,
  `${anyCase("verification")}[ _-]?(?:${anyCase("code")}|${anyCase("value")})`,
].join("|");
const LINK = ["is", "was", "code", "number", "no", "value", "of"].map(anyCase).join("|");
const NAMED_CVV = new RegExp(
  `((?:${NAME})2?)((?:[\\s"'\`:=#.,;()[\\]{}<>*-]|\\b(?:${LINK})\\b){0,8}?)\\p{Nd}{3,4}(?!\\p{Nd})`,
  "gu",
);

/** A verification code needs a name of three letters or more: most strings are ruled out by this cheap test. */
const MAY_NAME_CODE = /cv|cs|ci|ca|pi|pw|pa|se|ve/i;

/** `redactCardNumbers`, and verification codes named in the text. */
export function redactCardText(text: string): string {
  return withoutNamedCodes(redactCardNumbers(text));
}

/** `maskCardNumbers`, and verification codes named in the text: what a job's data may keep of free text. */
export function maskCardText(text: string): string {
  return withoutNamedCodes(maskCardNumbers(text));
}

function withoutNamedCodes(text: string): string {
  return text.length < 6 || !MAY_NAME_CODE.test(text) ? text : text.replace(NAMED_CVV, `$1$2${REDACTED}`);
}
