import { utf8 } from "./encoding.js";

/** How far a signed timestamp may be from now, either way: 5 minutes, as the specifications advise. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type HmacAlgorithm = "sha256" | "sha512";

/** A shared secret: a string is used as its UTF-8 bytes, a byte array as is. */
export type HmacSecret = string | Uint8Array;

const WEB_CRYPTO_HASH: Record<HmacAlgorithm, string> = { sha256: "SHA-256", sha512: "SHA-512" };

export function secretList(secret: HmacSecret | readonly HmacSecret[], what: string): Uint8Array[] {
  const list = (Array.isArray(secret) ? secret : [secret]) as readonly HmacSecret[];
  if (list.length === 0) throw new TypeError(`${what}: at least one secret is required`);
  return list.map((one) => hmacSecretBytes(one, what));
}

/** The key bytes of one secret: a string's UTF-8 bytes, a byte array as is; empty is refused. */
export function hmacSecretBytes(secret: HmacSecret, what: string): Uint8Array {
  const bytes = typeof secret === "string" ? utf8.encode(secret) : secret;
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) throw new TypeError(`${what}: a secret must not be empty`);
  return bytes;
}

/**
 * The HMAC keys for a verifier, imported on first use and then kept: key import costs a Web Crypto
 * round trip, which a verifier should pay once, not per delivery. Imported lazily because a verifier
 * is built synchronously and an import failure must surface as a failed check, not an unhandled rejection.
 */
export function hmacKeys(secrets: readonly Uint8Array[], algorithm: HmacAlgorithm): () => Promise<CryptoKey[]> {
  const hash = WEB_CRYPTO_HASH[algorithm];
  if (!hash) throw new TypeError(`unsupported HMAC algorithm: ${String(algorithm)}`);
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

/** Is `timestamp` (whole Unix seconds, as sent) within `toleranceSeconds` of now, in either direction? */
export function isFresh(timestamp: string | undefined, toleranceSeconds: number): boolean {
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  return Math.abs(Date.now() / 1000 - Number(timestamp)) <= toleranceSeconds;
}

export function checkTolerance(toleranceSeconds: number, what: string): number {
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError(`${what}: toleranceSeconds must be a non-negative number`);
  }
  return toleranceSeconds;
}
