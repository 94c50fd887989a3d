/**
 * Card numbers in every written form a review found leaking, generated: each separator, digit script
 * and encoding, at 13, 15, 16 and 19 digits, Luhn-valid or not. `showsCard` finds a card number in
 * any of those forms in text written anywhere (a log, a Redis value, a page), so a test can ask
 * "is this card number still there" without knowing how it was written.
 */

/** mulberry32: every bit of it random enough for digits (a plain LCG's low bits repeat). */
export function seeded(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n: number) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** A Luhn-valid number of `length` digits starting with `prefix`, the rest drawn from `random`. */
export function cardNumber(prefix: string, length: number, random: (n: number) => number): string {
  let digits = prefix;
  while (digits.length < length - 1) digits += String(random(10));
  for (let check = 0; check < 10; check++) if (luhnValid(digits + check)) return digits + check;
  throw new Error("unreachable");
}

/** The same number with its check digit wrong: Luhn-invalid. */
export const notACard = (pan: string): string => pan.slice(0, -1) + String((Number(pan.at(-1)) + 1) % 10);

/** Separators between a card's groups, as the review wrote them (`[before, between, after]` for brackets). */
export const SEPARATORS: ReadonlyArray<readonly [string, string]> = [
  ["space", " "],
  ["space-dash-space", " - "],
  ["dash", "-"],
  ["en dash", "\u2013"],
  ["em dash", "\u2014"],
  ["hyphen U+2010", "\u2010"],
  ["non-breaking hyphen U+2011", "\u2011"],
  ["minus sign", "\u2212"],
  ["soft hyphen", "\u00ad"],
  ["zero-width space", "\u200b"],
  ["word joiner", "\u2060"],
  ["zero-width no-break space", "\ufeff"],
  ["no-break space", "\u00a0"],
  ["ideographic space", "\u3000"],
  ["thin space", "\u2009"],
  ["plus", "+"],
  ["colon", ":"],
  ["pipe", "|"],
  ["brackets", ")("],
  ["three newlines", "\n\n\n"],
  ["CRLF", "\r\n"],
  ["tab", "\t"],
  ["dot", "."],
  ["underscore", "_"],
  ["slash", "/"],
  ["comma-space", ", "],
  ["%2D", "%2D"],
  ["%20", "%20"],
  ["%E2%80%8B", "%E2%80%8B"],
  ["%C2%A0", "%C2%A0"],
  ["&nbsp;", "&nbsp;"],
  ["&#45;", "&#45;"],
  ["&#x2d;", "&#x2d;"],
  ["&ndash;", "&ndash;"],
  ["JSON \\u2011", "\\u2011"],
  ["JSON \\n", "\\n"],
];

/** Decimal digit scripts: the code point of each one's zero. */
export const SCRIPTS: ReadonlyArray<readonly [string, number]> = [
  ["ASCII", 0x30],
  ["full-width", 0xff10],
  ["Arabic-Indic", 0x660],
  ["Extended Arabic-Indic", 0x6f0],
  ["Devanagari", 0x966],
  ["Bengali", 0x9e6],
  ["Thai", 0xe50],
  ["Mathematical bold", 0x1d7ce],
];

export const inScript = (digits: string, zero: number): string =>
  [...digits].map((d) => String.fromCodePoint(zero + Number(d))).join("");

/** Encodings of the whole written number. */
export const ENCODINGS: ReadonlyArray<readonly [string, (text: string) => string]> = [
  ["as is", (text) => text],
  ["percent-encoded", (text) => encodeURIComponent(text)],
  ["HTML numeric references", (text) => [...text].map((c) => `&#${c.codePointAt(0)};`).join("")],
];

/** Cards are printed in fours, or four-six-five (American Express: 15 digits). */
export function printedGroups(pan: string): string[] {
  if (pan.length === 15) return [pan.slice(0, 4), pan.slice(4, 10), pan.slice(10)];
  return pan.match(/.{1,4}/g)!;
}

export interface CardForm {
  name: string;
  pan: string;
  /** The number as written. */
  text: string;
  valid: boolean;
}

/**
 * Every separator × digit script × encoding, at 13, 15, 16 and 19 digits, valid and not: 5,632 forms
 * (a separator already written as an escape is not encoded again).
 */
export function cardForms(seed = 42): CardForm[] {
  const random = seeded(seed);
  const forms: CardForm[] = [];
  const lengths: Array<[string, number]> = [
    ["4", 13],
    ["37", 15],
    ["5", 16],
    ["6", 19],
  ];
  for (const [prefix, length] of lengths) {
    for (const [sepName, sep] of SEPARATORS) {
      for (const [scriptName, zero] of SCRIPTS) {
        for (const [encodingName, encode] of ENCODINGS) {
          if (encodingName !== "as is" && /[%&\\]/.test(sep)) continue;
          const valid = cardNumber(prefix, length, random);
          for (const pan of [valid, invalidAtEveryWindow(valid, random)]) {
            const groups = printedGroups(pan).map((g) => inScript(g, zero));
            const written = sep === ")(" ? `(${groups.join(sep)})` : groups.join(sep);
            forms.push({
              name: `${length} digits, ${sepName}, ${scriptName}, ${encodingName}, ${pan === valid ? "valid" : "invalid"}`,
              pan,
              text: encode(written),
              valid: pan === valid,
            });
          }
        }
      }
    }
  }
  return forms;
}

/** A number like `pan` (same prefix and length) no run of whole groups of which (13 digits or more) passes the Luhn check. */
function invalidAtEveryWindow(pan: string, random: (n: number) => number): string {
  for (;;) {
    let candidate = pan.slice(0, 2);
    while (candidate.length < pan.length) candidate += String(random(10));
    const groups = printedGroups(candidate);
    let anyValid = false;
    for (let first = 0; first < groups.length; first++)
      for (let last = first; last < groups.length; last++) {
        const digits = groups.slice(first, last + 1).join("");
        if (digits.length >= 13 && luhnValid(digits)) anyValid = true;
      }
    if (!anyValid) return candidate;
  }
}

const decodeEntities = (text: string) =>
  text
    .replace(/&#[xX]([0-9a-fA-F]+);/g, (_, hex) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#([0-9]+);/g, (_, dec) => String.fromCodePoint(Number(dec)));

const decodePercents = (text: string) =>
  text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });

const decodeJsonEscapes = (text: string) =>
  text.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex) => String.fromCharCode(Number.parseInt(hex, 16)));

/** Every decimal digit of `text` in ASCII, after undoing percent escapes, HTML and JSON escapes (twice: JSON of HTML). */
export function digitsOf(text: string): string {
  let plain = text;
  for (let i = 0; i < 2; i++) plain = decodeJsonEscapes(decodeEntities(decodePercents(plain)));
  let digits = "";
  for (const char of plain) {
    if (!/\p{Nd}/u.test(char)) continue;
    let zero = char.codePointAt(0)!;
    while (/\p{Nd}/u.test(String.fromCodePoint(zero - 1))) zero--;
    digits += String((char.codePointAt(0)! - zero) % 10);
  }
  return digits;
}

/**
 * Whether `text` still shows `pan`: its digits, in any script and encoding, with everything between
 * them taken out. Taking them out can only join digits that were apart, never hide a card that is there.
 */
export const showsCard = (text: string, pan: string): boolean => digitsOf(text).includes(pan);
