import { coded } from "../shared/errors.js";
import { bytesToHex } from "./encoding.js";
import { type HmacAlgorithm, hmacKeys } from "./hmac.js";
import { failure, type VerifyFailure } from "./verify-outcome.js";

type Headers = Readonly<Record<string, string>>;

/**
 * Picks the secret(s) for one delivery from its headers, e.g. by a tenant header, so one endpoint can
 * serve several senders. Throwing or returning no secret fails the check (401, logged with the reason
 * `secret_lookup_failed` or `no_secret_for_tenant`); one that never settles is cut off by the
 * receiver's `verifyTimeoutMs` (503).
 */
export type SecretResolver<S> = (headers: Headers) => S | readonly S[] | Promise<S | readonly S[]>;

/** A secret, several while one is rotated, or a function that picks them per delivery. */
export type SecretOption<S> = S | readonly S[] | SecretResolver<S>;

/**
 * Imported keys kept per verifier for secrets a resolver returned. Bounded, because a resolver's
 * secrets come from outside the process (one per tenant) and a long-running receiver must not grow
 * without limit; the least recently used key is dropped first.
 */
export const MAX_CACHED_SECRETS = 1_000;

const listOf = <S>(value: S | readonly S[]): readonly S[] => (Array.isArray(value) ? value : [value as S]);

/**
 * The HMAC keys to try for one delivery. Static secrets are checked when the verifier is built (a bad
 * secret throws at start-up) and imported once. A resolver is called per delivery; the key bytes it
 * yields are imported once per distinct secret and kept in a bounded cache, since importing a key
 * costs a Web Crypto round trip that a steady tenant should not pay on every delivery.
 */
export function secretKeys<S>(
  secret: SecretOption<S>,
  keyBytes: (secret: S) => Uint8Array,
  algorithm: HmacAlgorithm,
  what: string,
): (headers: Headers) => Promise<CryptoKey[] | VerifyFailure> {
  if (typeof secret !== "function") {
    const list = listOf(secret as S | readonly S[]);
    if (list.length === 0) throw coded(new TypeError(`${what}: at least one secret is required`), "MW_INVALID_SECRET");
    const keys = hmacKeys(list.map(keyBytes), algorithm);
    return () => keys();
  }
  const resolve = secret as SecretResolver<S>;
  const cache = new Map<string, Promise<CryptoKey>>();
  const keyFor = (bytes: Uint8Array): Promise<CryptoKey> => {
    const name = bytesToHex(bytes);
    let key = cache.get(name);
    if (key) {
      cache.delete(name); // re-inserted below: Map order is the recency order
    } else {
      key = hmacKeys([bytes], algorithm)().then(([one]) => one!);
      // A failed import is not kept: the next delivery tries again.
      key.catch(() => cache.delete(name));
    }
    cache.set(name, key);
    if (cache.size > MAX_CACHED_SECRETS) cache.delete(cache.keys().next().value!);
    return key;
  };
  // A lookup that throws or yields a secret that cannot be decoded leaves no key to match, so the
  // check fails (401, and the sender retries) like any bad signature: verifiers never throw per delivery.
  return async (headers) => {
    let found: S | readonly S[] | null | undefined;
    try {
      found = await resolve(headers);
    } catch (err) {
      return failure(
        "secret_lookup_failed",
        `the secret function threw (${err instanceof Error ? err.name : typeof err})`,
      );
    }
    const list = found === undefined || found === null ? [] : listOf(found);
    if (list.length === 0)
      return failure("no_secret_for_tenant", "the secret function returned no secret for this delivery");
    try {
      return await Promise.all(list.map((one) => keyFor(keyBytes(one))));
    } catch (err) {
      // keyBytes' messages describe the secret's shape (length, encoding), never its content.
      const why = err instanceof Error ? err.message : String(err);
      return failure("secret_lookup_failed", `the secret function returned a secret that cannot be used: ${why}`);
    }
  };
}
