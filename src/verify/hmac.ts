import { coded, optionError } from "../shared/errors.js";
import { utf8 } from "./encoding.js";
import { failure, type VerifyFailure } from "./verify-outcome.js";

/** How far a signed timestamp may be from now, either way: 5 minutes, as the specifications advise. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type HmacAlgorithm = "sha256" | "sha512";

/** A shared secret: a string is used as its UTF-8 bytes, a byte array as is. */
export type HmacSecret = string | Uint8Array;

const WEB_CRYPTO_HASH: Record<HmacAlgorithm, string> = { sha256: "SHA-256", sha512: "SHA-512" };

export function secretList(secret: HmacSecret | readonly HmacSecret[], what: string): Uint8Array[] {
  const list = (Array.isArray(secret) ? secret : [secret]) as readonly HmacSecret[];
  if (list.length === 0) throw coded(new TypeError(`${what}: at least one secret is required`), "MW_INVALID_SECRET");
  return list.map((one) => hmacSecretBytes(one, what));
}

/**
 * The shortest HMAC secret a verifier accepts. A short shared secret can be guessed offline from one
 * signed delivery; 16 random bytes (128 bits) is the floor NIST SP 800-107 sets for HMAC keys.
 */
export const MIN_HMAC_SECRET_BYTES = 16;

/** Refuse a secret too short to trust, saying why and what to do; the secret itself is never shown. */
export function strongEnough(bytes: Uint8Array, minimum: number, what: string): Uint8Array {
  if (bytes.length < minimum) {
    throw coded(
      new RangeError(
        `${what}: a secret of ${bytes.length} byte(s) is too short to resist guessing; use at least ${minimum} random bytes (e.g. crypto.randomBytes(32).toString("base64url"))`,
      ),
      "MW_WEAK_SECRET",
    );
  }
  return bytes;
}

/** The key bytes of one secret: a string's UTF-8 bytes, a byte array as is; empty is refused. */
export function hmacSecretBytes(secret: HmacSecret, what: string): Uint8Array {
  const bytes = typeof secret === "string" ? utf8.encode(secret) : secret;
  if (!(bytes instanceof Uint8Array) || bytes.length === 0)
    throw coded(new TypeError(`${what}: a secret must not be empty`), "MW_INVALID_SECRET");
  return bytes;
}

/**
 * The HMAC keys for a verifier, imported on first use and then kept: key import costs a Web Crypto
 * round trip, which a verifier should pay once, not per delivery. Imported lazily because a verifier
 * is built synchronously and an import failure must surface as a failed check, not an unhandled rejection.
 */
export function hmacKeys(secrets: readonly Uint8Array[], algorithm: HmacAlgorithm): () => Promise<CryptoKey[]> {
  const hash = WEB_CRYPTO_HASH[algorithm];
  if (!hash)
    throw optionError(
      new TypeError(`unsupported HMAC algorithm: ${String(algorithm)}`),
      "MW_INVALID_OPTION",
      "algorithm",
    );
  let keys: Promise<CryptoKey[]> | undefined;
  return () =>
    (keys ??= Promise.all(
      secrets.map((secret) =>
        crypto.subtle.importKey("raw", secret as Uint8Array<ArrayBuffer>, { name: "HMAC", hash }, false, ["sign"]),
      ),
    ));
}

export async function hmac(key: CryptoKey, content: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, content as Uint8Array<ArrayBuffer>));
}

/** `prefix` followed by `body`, as one byte array to sign. */
export function prefixed(prefix: string, body: Uint8Array): Uint8Array {
  const head = utf8.encode(prefix);
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

/**
 * Why `timestamp` (whole Unix seconds, as sent) is refused, or `undefined` when it is within
 * `toleranceSeconds` of now in either direction. A timestamp far ahead is refused like a stale one: a
 * signature made "in the future" could otherwise be replayed until that future arrives.
 */
export function timestampFailure(
  timestamp: string | undefined,
  toleranceSeconds: number,
  header: string,
): VerifyFailure | undefined {
  if (timestamp === undefined || timestamp === "") return failure("no_timestamp", `no "${header}" header`);
  if (!/^\d{1,12}$/.test(timestamp)) {
    const hint = /^\d{13,16}$/.test(timestamp) ? " (it looks like milliseconds; seconds are expected)" : "";
    return failure("malformed_timestamp", `"${header}" is not whole Unix seconds${hint}`);
  }
  const skew = Math.round(Date.now() / 1000 - Number(timestamp));
  if (Math.abs(skew) <= toleranceSeconds) return undefined;
  const direction = skew > 0 ? "in the past" : "in the future";
  return failure(
    "timestamp_outside_tolerance",
    `"${header}" is ${Math.abs(skew)} s ${direction}, beyond the tolerance of ${toleranceSeconds} s (check the sender's and this host's clocks)`,
  );
}

export function checkTolerance(toleranceSeconds: number, what: string): number {
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw optionError(
      new RangeError(`${what}: toleranceSeconds must be a non-negative number`),
      "MW_INVALID_OPTION",
      "toleranceSeconds",
    );
  }
  return toleranceSeconds;
}
