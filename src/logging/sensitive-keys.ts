/** How a key's value is treated by redaction. */
export type KeyKind = "card_secret" | "personal" | "identifier" | "other";

/**
 * Card verification data and card-number derivatives, compared after lower-casing and dropping
 * everything but letters and digits, so `CVV`, `cvv2`, `Card-Pwd` and `securityCode` all match.
 */
const CARD_SECRET = /^(?:cvc|cvv|cvn|cav|csc)2?$|^(?:card)?(?:pwd|password|pin)$|securitycode|verification(?:value|code)|^cardnumber$|^pan$|^cardmd5$|^cardhash$|^cardcontractid$/;

/** Personal data of payers and subscribers (compared the same way). */
const PERSONAL = new Set([
  "email",
  "emailaddress",
  "phonenumber",
  "payertelephonenumber",
  "ip",
  "payerip",
  "holdername",
  "address",
  "payeraddress",
  "billingaddress",
  "platformloginid",
  "payerloginid",
]);

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
  const kind: KeyKind = CARD_SECRET.test(folded) ? "card_secret" : PERSONAL.has(folded) ? "personal" : isIdentifier(key) ? "identifier" : "other";
  if (cache.size < CACHE_LIMIT && key.length <= 64) cache.set(key, kind);
  return kind;
}
