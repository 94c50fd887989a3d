export const REDACTED = "[REDACTED]";

/**
 * A run of at least 13 digits that may be broken up by one or two separators between digits: any
 * white space (a space, a no-break space, a tab, a newline), dashes, dots, underscores, commas or
 * slashes, the ways people and systems group or wrap a card number. Separators and digits never
 * overlap, so matching stays linear however long the input. Matched on `normalised` text.
 */
const DIGIT_RUN = /(?<![0-9])[0-9](?:[\s._,/-]{0,2}[0-9]){12,}/g;
const GROUP = /[0-9]+/g;
const LETTER = /^[A-Za-z]$/;

/**
 * Forms a card number takes that a scan for ASCII digits would miss: full-width digits (U+FF10 to
 * U+FF19, one UTF-16 unit each) and separators written as percent escapes (`%20`, `%09`, `%0A`, `%0D`,
 * `%2C`, `%2F`, and the no-break space `%C2%A0`), as a URL or a form body carries them.
 */
const DISGUISED = /[\uFF10-\uFF19]|%(?:20|09|0[AaDd]|2[CcFf]|[Cc]2%[Aa]0)/g;
const MAY_BE_DISGUISED = /[\uFF10-\uFF19%]/;

/**
 * `text` with full-width digits made ASCII and each percent-escaped separator made one space, and
 * where each character of the result came from in `text` (`at`, undefined when nothing changed).
 * Every digit of the result is one character of `text`, so a span of digits maps back exactly.
 */
function normalised(text: string): { text: string; at: number[] | undefined } {
  if (!MAY_BE_DISGUISED.test(text)) return { text, at: undefined };
  let out = "";
  const at: number[] = [];
  let copied = 0;
  const copyUpTo = (end: number) => {
    out += text.slice(copied, end);
    for (let i = copied; i < end; i++) at.push(i);
  };
  for (const match of text.matchAll(DISGUISED)) {
    copyUpTo(match.index);
    const code = match[0].charCodeAt(0);
    out += match[0].length === 1 ? String.fromCharCode(code - 0xff10 + 48) : " ";
    at.push(match.index);
    copied = match.index + match[0].length;
  }
  copyUpTo(text.length);
  return at.length === out.length && out === text ? { text, at: undefined } : { text: out, at };
}

const MIN_PAN = 13;
export const MAX_PAN = 19;

/** Luhn check over `digits[start, end)`. */
function passesLuhn(digits: string, start: number, end: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = end - 1; i >= start; i--) {
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

export function isCardNumber(digits: string): boolean {
  return digits.length >= MIN_PAN && digits.length <= MAX_PAN && passesLuhn(digits, 0, digits.length);
}

/**
 * The card numbers inside one digit run, as [start, end) offsets into the run. First, cards made of
 * whole groups, longest first (`4111 1111 1111 1111 09/29` keeps its expiry, `ref 55 5555…` its
 * reference). Then, among the groups left, any 13 to 19 consecutive digits passing the Luhn check, even
 * where they start or end inside a group (`ref 125555 5555 5555 4444`, a card glued to other digits):
 * the groups such a window touches go whole. A card number is a card number wherever it sits.
 *
 * Commas and slashes also separate lists and dates (`sizes 10/12/14/16`, `ids 123, 456, 789`), whose
 * digits pass the Luhn check somewhere one time in a few: in a run holding one, only whole groups
 * grouped as cards are (`4111,1111,1111,1111`, `4111/111111/11111`) are taken for a card.
 */
function cardSpans(run: string): Array<[number, number]> {
  const groups: Array<{ at: number; digits: string }> = [];
  for (const m of run.matchAll(GROUP)) groups.push({ at: m.index, digits: m[0] });
  const masked = new Array<boolean>(groups.length).fill(false);
  const listLike = LIST_SEPARATOR.test(run);
  let g = 0;
  while (g < groups.length) {
    const next = groupAlignedCard(groups, g, listLike);
    if (next === undefined) g++;
    else for (; g < next; g++) masked[g] = true;
  }
  if (!listLike) maskWindows(groups, masked);
  const spans: Array<[number, number]> = [];
  for (let i = 0; i < groups.length; i++) {
    if (!masked[i]) continue;
    const start = groups[i]!.at;
    while (i + 1 < groups.length && masked[i + 1]) i++;
    spans.push([start, groups[i]!.at + groups[i]!.digits.length]);
  }
  return spans;
}

const LIST_SEPARATOR = /[,/]/;

/**
 * The group after the longest card number made of whole groups starting at group `first`, if any;
 * with `cardShaped`, only groups grouped as cards are (`groupedLikeACard`).
 */
function groupAlignedCard(
  groups: ReadonlyArray<{ digits: string }>,
  first: number,
  cardShaped: boolean,
): number | undefined {
  let digits = "";
  let next: number | undefined;
  for (let g = first; g < groups.length; g++) {
    digits += groups[g]!.digits;
    if (digits.length > MAX_PAN) break;
    if (isCardNumber(digits) && (!cardShaped || groupedLikeACard(groups.slice(first, g + 1).map((x) => x.digits))))
      next = g + 1;
  }
  return next;
}

/**
 * Marks the groups under every card-long window of digits that passes the Luhn check, over the groups
 * not masked yet. At most 7 windows start at each digit, so the scan stays linear.
 */
function maskWindows(groups: ReadonlyArray<{ digits: string }>, masked: boolean[]): void {
  let g = 0;
  while (g < groups.length) {
    if (masked[g]) {
      g++;
      continue;
    }
    let end = g;
    let digits = "";
    const groupOf: number[] = [];
    for (; end < groups.length && !masked[end]; end++) {
      digits += groups[end]!.digits;
      for (let i = 0; i < groups[end]!.digits.length; i++) groupOf.push(end);
    }
    for (let start = 0; start + MIN_PAN <= digits.length; start++) {
      for (let len = MIN_PAN; len <= MAX_PAN && start + len <= digits.length; len++) {
        if (!passesLuhn(digits, start, start + len)) continue;
        for (let k = groupOf[start]!; k <= groupOf[start + len - 1]!; k++) masked[k] = true;
      }
    }
    g = end;
  }
}

/**
 * Replace every card number inside a string. Digit runs are card numbers only where a card's length
 * passes the Luhn check, so ordinary amounts, dates and short ids are left alone.
 */
export function redactCardNumbers(text: string): string {
  return replaceCardNumbers(text, () => REDACTED);
}

/** Every card number inside a string masked as `maskCardNumber` does: for handlers, not for logs. */
export function maskCardNumbers(text: string): string {
  return replaceCardNumbers(text, maskCardNumber);
}

function replaceCardNumbers(text: string, replacement: (pan: string) => string): string {
  if (text.length < MIN_PAN) return text;
  const plain = normalised(text);
  let out = "";
  let copied = 0;
  for (const run of plain.text.matchAll(DIGIT_RUN)) {
    for (const [start, end] of cardSpans(run[0])) {
      const from = run.index + start;
      const to = run.index + end;
      // Spans start and end on a digit, which is one character of the original text.
      const originalFrom = plain.at ? plain.at[from]! : from;
      const originalTo = plain.at ? plain.at[to - 1]! + 1 : to;
      out += text.slice(copied, originalFrom) + replacement(plain.text.slice(from, to));
      copied = originalTo;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Whether an id holds a card number written as one: a run of 13 to 19 digits, whole, passing the Luhn
 * check, that begins as the card networks' numbers do (`plausibleIssuer`), either unbroken or grouped
 * as cards are (fours with a shorter last group, or four-six-five), in any of the forms `normalised`
 * undoes. Digits glued to more digits, grouped otherwise (a UUID's `a456-426614174000`) or starting as
 * no card does (an id built on `Date.now()`, 13 digits from 1) are not taken for one: ids are digit
 * runs by nature, and one in ten such runs passes the Luhn check by chance.
 */
export function holdsCardNumber(text: string): boolean {
  if (text.length < MIN_PAN || !hasCardManyDigits(text)) return false;
  const plain = normalised(text).text;
  for (const run of plain.matchAll(DIGIT_RUN)) {
    // Glued to a letter it is part of a token, such as a hex id (`WH-5438EA8149404097823D`): a card
    // number written in an id stands apart from letters (`ref-4111 1111 1111 1111`, `4111111111111111`).
    if (LETTER.test(plain[run.index - 1] ?? "") || LETTER.test(plain[run.index + run[0].length] ?? "")) continue;
    const groups = run[0].match(GROUP)!;
    const digits = groups.join("");
    if (plausibleIssuer(digits) && isCardNumber(digits) && groupedLikeACard(groups)) return true;
  }
  return false;
}

/**
 * The first digits of the card networks' numbers: 2 to 6 (Visa, Mastercard, American Express,
 * Discover, Diners, JCB, UnionPay, Maestro, Mir), 81 and 82 (UnionPay, RuPay), and 1 for UATP's 15.
 */
function plausibleIssuer(digits: string): boolean {
  const first = digits.charCodeAt(0) - 48;
  if (first >= 2 && first <= 6) return true;
  if (first === 8) return digits[1] === "1" || digits[1] === "2";
  return first === 1 && digits.length === 15;
}

/** At least 13 digits, ASCII or full-width: a cheap count that settles most ids (it runs on every log line's). */
function hasCardManyDigits(text: string): boolean {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code >= 48 && code <= 57) || (code >= 0xff10 && code <= 0xff19)) {
      if (++digits >= MIN_PAN) return true;
    }
  }
  return false;
}

function groupedLikeACard(groups: readonly string[]): boolean {
  if (groups.length === 1) return true;
  const lengths = groups.map((group) => group.length);
  if (lengths.slice(0, -1).every((length) => length === 4) && lengths.at(-1)! <= 4) return true;
  return lengths.length === 3 && lengths[0] === 4 && lengths[1] === 6 && lengths[2]! >= 4 && lengths[2]! <= 5;
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
 * Card verification data written into free text next to its name (`cvv: 123`, `card_pwd=4321`).
 * Bounded quantifiers only, so the scan is linear.
 */
const NAMED_CVV =
  /\b(cvc2?|cvv2?|cvn2?|csc|card[ _-]?pwd|security[ _-]?code)(["' ]{0,2}[:=]?["' ]{0,2})[0-9]{3,4}(?![0-9])/gi;

/** A verification code needs three digits in a row: most strings are ruled out by this cheap test. */
const THREE_DIGITS = /[0-9]{3}/;

/** `redactCardNumbers`, and verification codes named in the text. */
export function redactCardText(text: string): string {
  return withoutNamedCodes(redactCardNumbers(text));
}

/** `maskCardNumbers`, and verification codes named in the text: what a job's data may keep of free text. */
export function maskCardText(text: string): string {
  return withoutNamedCodes(maskCardNumbers(text));
}

function withoutNamedCodes(text: string): string {
  return text.length < 6 || !THREE_DIGITS.test(text) ? text : text.replace(NAMED_CVV, `$1$2${REDACTED}`);
}
