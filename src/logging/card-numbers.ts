export const REDACTED = "[REDACTED]";

/**
 * A run of at least 13 digits that may be broken up by one or two separators between digits: spaces,
 * dashes, dots or underscores, the ways people group a card number. Separators and digits never
 * overlap, so matching stays linear however long the input.
 */
const DIGIT_RUN = /(?<![0-9])[0-9](?:[ ._-]{0,2}[0-9]){12,}/g;
const GROUP = /[0-9]+/g;

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
 */
function cardSpans(run: string): Array<[number, number]> {
  const groups: Array<{ at: number; digits: string }> = [];
  for (const m of run.matchAll(GROUP)) groups.push({ at: m.index, digits: m[0] });
  const masked = new Array<boolean>(groups.length).fill(false);
  let g = 0;
  while (g < groups.length) {
    const next = groupAlignedCard(groups, g);
    if (next === undefined) g++;
    else for (; g < next; g++) masked[g] = true;
  }
  maskWindows(groups, masked);
  const spans: Array<[number, number]> = [];
  for (let i = 0; i < groups.length; i++) {
    if (!masked[i]) continue;
    const start = groups[i]!.at;
    while (i + 1 < groups.length && masked[i + 1]) i++;
    spans.push([start, groups[i]!.at + groups[i]!.digits.length]);
  }
  return spans;
}

/** The group after the longest card number made of whole groups starting at group `first`, if any. */
function groupAlignedCard(groups: ReadonlyArray<{ digits: string }>, first: number): number | undefined {
  let digits = "";
  let next: number | undefined;
  for (let g = first; g < groups.length; g++) {
    digits += groups[g]!.digits;
    if (digits.length > MAX_PAN) break;
    if (isCardNumber(digits)) next = g + 1;
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
  return text.replace(DIGIT_RUN, (run) => {
    const spans = cardSpans(run);
    if (spans.length === 0) return run;
    let out = "";
    let at = 0;
    for (const [start, end] of spans) {
      out += run.slice(at, start) + replacement(run.slice(start, end));
      at = end;
    }
    return out + run.slice(at);
  });
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
  const cards = redactCardNumbers(text);
  return cards.length < 6 || !THREE_DIGITS.test(cards) ? cards : cards.replace(NAMED_CVV, `$1$2${REDACTED}`);
}
