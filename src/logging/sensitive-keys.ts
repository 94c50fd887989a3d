/**
 * How a key's value is treated. Card verification data is never stored anywhere; card numbers are
 * never stored in clear; what derives from a card number (its hash, a contract that charges it) is
 * kept only sealed.
 */
export type KeyKind =
  | "card_verification"
  | "card_number"
  | "card_derived"
  | "personal"
  | "phone"
  | "identifier"
  | "other";

/**
 * Keys are compared after lower-casing and dropping everything but letters and digits, so `CVV`,
 * `cvv2`, `Card-Pwd` and `securityCode` all match. The verification codes' names are found anywhere
 * in the folded key (`card_cvv`, `cvc_code`, `cvv_number`, `cardCvc`); the short names that other
 * words contain (`cid` in `incident`, `pin` in `shipping`) only as a word of the key (`card_cid`,
 * `pinCode`).
 */
const CARD_VERIFICATION = /cvc|cvv|cvn|csc|cvd|pwd|password|passcode|securitycode|verification(?:value|code)/;
const VERIFICATION_WORD = /^(?:cid|cav|pin)2?$/;
/** A key's words: split at anything but letters and digits, and where camel case starts a word. */
const words = (key: string): string[] =>
  key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
/** What a check of the code answered (`cvc_result: "M"`, the interface's own field), not the code. */
const OUTCOME_WORD = /^(?:result|response|status|check|match|outcome|indicator|present|provided)$/;
function namesVerification(key: string, folded: string): boolean {
  const parts = words(key);
  if (OUTCOME_WORD.test(parts.at(-1) ?? "")) return false;
  return CARD_VERIFICATION.test(folded) || parts.some((word) => VERIFICATION_WORD.test(word));
}
const CARD_NUMBER = /^(?:cardnumber|pan|primaryaccountnumber)$/;
const CARD_DERIVED = /^(?:cardmd5|cardhash|cardcontractid)$/;

/** Personal data of payers and subscribers (compared the same way). */
const PERSONAL = new Set([
  "email",
  "emailaddress",
  "ip",
  "payerip",
  "holdername",
  "address",
  "payeraddress",
  "billingaddress",
  "platformloginid",
  "payerloginid",
]);

/** Personal too, and digit runs by nature: a phone number may pass the Luhn check, and is no card number. */
const PHONE = /^(?:payer)?(?:phone|telephone|mobile)(?:number)?$/;

/** Ids and times are digit runs by nature and no card number belongs in them; scanning them corrupts recordings. */
function isIdentifier(key: string): boolean {
  return key === "id" || key.endsWith("_id") || key.endsWith("_time") || key === "execution_phase";
}

/**
 * Payloads repeat the same few dozen keys, so each key is classified once. The cache is bounded: an
 * attacker's random keys are classified afresh rather than kept.
 */
const cache = new Map<string, KeyKind>();
const CACHE_LIMIT = 2_048;

export function kindOfKey(key: string): KeyKind {
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const folded = key.toLowerCase().replace(/[^a-z0-9]/g, "");
  const kind: KeyKind = namesVerification(key, folded)
    ? "card_verification"
    : CARD_NUMBER.test(folded)
      ? "card_number"
      : CARD_DERIVED.test(folded)
        ? "card_derived"
        : PERSONAL.has(folded)
          ? "personal"
          : PHONE.test(folded)
            ? "phone"
            : isIdentifier(key)
              ? "identifier"
              : "other";
  if (cache.size < CACHE_LIMIT && key.length <= 64) cache.set(key, kind);
  return kind;
}

export const isCardKind = (kind: KeyKind): boolean =>
  kind === "card_verification" || kind === "card_number" || kind === "card_derived";

/** Values that are digit runs by nature, and never scanned for card numbers: ids, times, phone numbers. */
export const isDigitsByNature = (kind: KeyKind): boolean => kind === "identifier" || kind === "phone";
