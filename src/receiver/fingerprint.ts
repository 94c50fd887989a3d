import type * as NodeCrypto from "node:crypto";
import { coded } from "../shared/errors.js";
import { type DigestSeeds, digestSeeds, valueDigest } from "./payload-digest.js";

/**
 * Node's HMAC is synchronous and about ten times cheaper than a Web Crypto signature, which waits for
 * a thread-pool round trip. `getBuiltinModule` reaches it without an import, so the core still loads
 * on Workers and other runtimes without `node:` modules, where Web Crypto is used instead.
 */
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as typeof NodeCrypto | undefined;

/** The key of the payload fingerprint's HMAC: a string is used as its UTF-8 bytes. */
export type FingerprintKey = string | Uint8Array;

/**
 * The key used when `fingerprintKey` is not given. It is public, so it keeps the fingerprint stable
 * (every receiver and worker of every version computes the same one, across restarts) but hides
 * nothing: set `fingerprintKey` to a secret shared by all receivers of one store to make the stored
 * fingerprint a keyed hash of the card data it covers.
 */
export const DEFAULT_FINGERPRINT_KEY = "merchant-webhooks payload fingerprint v1";

/** Shorter keys are refused: a keyed hash with a guessable key is an unkeyed one. */
export const MIN_FINGERPRINT_KEY_BYTES = 16;

const utf8 = new TextEncoder();

/** The payload fingerprint of a value, as `payloadFingerprinter` makes it. */
export interface Fingerprinter {
  (value: unknown): string | Promise<string>;
  /**
   * The fingerprint of a body `JSON.parse` just made, taken in the walk that also checks it: undefined
   * when that walk cannot vouch for it (it nests deeper than `maxDepth`, or holds a key named
   * `__proto__` or `constructor`, or the runtime has no synchronous HMAC), and the caller's own walk
   * must decide. A body is then walked once, not once for its checks and once for its digest. Only
   * for such a body: its objects are taken to be plain, without asking each for its prototype.
   */
  within(value: unknown, maxDepth: number): string | undefined;
}

/** What the lanes' seeds are derived from: HMAC(key, this), so the digest inside is keyed too. */
const SEED_LABEL = utf8.encode("merchant-webhooks payload digest seeds v2");

/**
 * HMAC-SHA-256, hex, keyed with `key`, of the payload's 128-bit digest (`payload-digest.ts`): the
 * fingerprint is of the JSON value, never of the bytes, because a sender may re-serialise a retry with
 * other spacing, key order or escapes, and it is still the same notification. The digest is taken in
 * one walk of the parsed value, equal exactly where the canonical JSON text (keys sorted) is equal,
 * without writing that text or a sorted copy. It is keyed because the payload holds card data, and
 * the fingerprint is kept beside the record (PCI DSS asks for keyed hashes of card data); the same key
 * must be used by every process sharing a store, or a redelivery meets 422.
 */
export function payloadFingerprinter(key: FingerprintKey = DEFAULT_FINGERPRINT_KEY): Fingerprinter {
  const bytes = typeof key === "string" ? utf8.encode(key) : key;
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < MIN_FINGERPRINT_KEY_BYTES)
    throw coded(new TypeError(`fingerprintKey must be at least ${MIN_FINGERPRINT_KEY_BYTES} bytes`), "MW_WEAK_SECRET");
  if (nodeCrypto) {
    const seeds = digestSeeds(nodeCrypto.createHmac("sha256", bytes).update(SEED_LABEL).digest());
    const sign = digestSigner(nodeCrypto, bytes);
    return Object.assign((value: unknown) => sign(digestOf(value, seeds)!), {
      within(value: unknown, maxDepth: number) {
        const digest = valueDigest(value, seeds, maxDepth);
        return digest instanceof Uint8Array ? sign(digest) : undefined;
      },
    });
  }
  let keyed: Promise<{ key: CryptoKey; seeds: DigestSeeds }> | undefined;
  const fingerprint = async (value: unknown) => {
    keyed ??= crypto.subtle
      .importKey("raw", bytes as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
      .then(async (key) => ({
        key,
        seeds: digestSeeds(new Uint8Array(await crypto.subtle.sign("HMAC", key, SEED_LABEL))),
      }));
    const { key, seeds } = await keyed;
    return hex(
      new Uint8Array(await crypto.subtle.sign("HMAC", key, digestOf(value, seeds) as Uint8Array<ArrayBuffer>)),
    );
  };
  // Web Crypto signs asynchronously: the body is checked by its own walk first, and signed later.
  return Object.assign(fingerprint, { within: () => undefined });
}

/** Bytes of a SHA-256 block, and of the payload digest `digestSigner` signs. */
const BLOCK_BYTES = 64;
const DIGEST_BYTES = 16;

/**
 * HMAC-SHA-256 of a 16-byte digest, hex. HMAC is two hashes (RFC 2104): H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)).
 * With the padded keys written once, each signature is two calls of Node's one-shot `crypto.hash`,
 * where `createHmac` builds a stream object around its native context for every call: in a receiver
 * that object cost more than the hashing. Where `crypto.hash` is missing (Node before 20.12), `createHmac`.
 */
export function digestSigner(crypto: typeof NodeCrypto, key: Uint8Array): (digest: Uint8Array) => string {
  if (typeof crypto.hash !== "function") {
    // A KeyObject made once: each HMAC then skips importing the key.
    const secret = crypto.createSecretKey(key);
    return (digest) => crypto.createHmac("sha256", secret).update(digest).digest("hex");
  }
  const block = new Uint8Array(BLOCK_BYTES);
  block.set(key.byteLength > BLOCK_BYTES ? crypto.hash("sha256", key, "buffer") : key);
  const inner = new Uint8Array(BLOCK_BYTES + DIGEST_BYTES);
  const outer = new Uint8Array(BLOCK_BYTES + 32);
  for (let i = 0; i < BLOCK_BYTES; i++) {
    inner[i] = block[i]! ^ 0x36;
    outer[i] = block[i]! ^ 0x5c;
  }
  return (digest) => {
    inner.set(digest, BLOCK_BYTES);
    outer.set(crypto.hash("sha256", inner, "buffer"), BLOCK_BYTES);
    return crypto.hash("sha256", outer, "hex");
  };
}

/**
 * The digest of plain JSON data, or of what `JSON.stringify` makes of anything else (a `toJSON`,
 * `undefined` members, class instances: a body another middleware parsed), which is the value its
 * canonical text describes.
 */
function digestOf(value: unknown, seeds: DigestSeeds): Uint8Array {
  return (valueDigest(value, seeds) ?? valueDigest(JSON.parse(JSON.stringify(value) ?? "null"), seeds)) as Uint8Array;
}

/** The fingerprint under the default key. */
export const fingerprintOf: Fingerprinter = payloadFingerprinter();

function hex(digest: Uint8Array): string {
  let out = "";
  for (let i = 0; i < digest.length; i++) out += HEX[digest[i]!];
  return out;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
