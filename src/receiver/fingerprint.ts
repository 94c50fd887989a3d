import { canonicalJson } from "../shared/canonical-json.js";
import type * as NodeCrypto from "node:crypto";

/**
 * Node's hashing is synchronous and about ten times cheaper than a Web Crypto digest, which waits for
 * a thread-pool round trip. `getBuiltinModule` reaches it without an import, so the core still loads
 * on Workers and other runtimes without `node:` modules, where Web Crypto is used instead.
 */
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.("node:crypto") as typeof NodeCrypto | undefined;

/**
 * SHA-256, hex, of the payload's canonical JSON (keys sorted): the fingerprint is of the JSON value,
 * never of the bytes, because a sender may re-serialise a retry with other spacing, key order or
 * escapes, and it is still the same notification.
 */
export function fingerprintOf(value: unknown): string | Promise<string> {
  const text = canonicalJson(value);
  if (nodeCrypto) {
    // The one-shot `hash` (Node 20.12+) skips the Hash object; older versions take the long way.
    return nodeCrypto.hash
      ? nodeCrypto.hash("sha256", text, "hex")
      : nodeCrypto.createHash("sha256").update(text).digest("hex");
  }
  return webFingerprint(text);
}

async function webFingerprint(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let hex = "";
  for (let i = 0; i < digest.length; i++) hex += HEX[digest[i]!];
  return hex;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
