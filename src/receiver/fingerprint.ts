import type * as NodeCrypto from "node:crypto";

/**
 * Node's hashing is synchronous and about ten times cheaper than a Web Crypto digest, which waits for
 * a thread-pool round trip. `getBuiltinModule` reaches it without an import, so the core still loads
 * on Workers and other runtimes without `node:` modules, where Web Crypto is used instead.
 */
const nodeCrypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
  "node:crypto",
) as typeof NodeCrypto | undefined;

/** SHA-256 of the exact bytes received, hex: a retried delivery repeats those bytes. */
export function fingerprintOf(bytes: Uint8Array): string | Promise<string> {
  if (nodeCrypto) {
    // The one-shot `hash` (Node 20.12+) skips the Hash object; older versions take the long way.
    return nodeCrypto.hash ? nodeCrypto.hash("sha256", bytes, "hex") : nodeCrypto.createHash("sha256").update(bytes).digest("hex");
  }
  return webFingerprint(bytes);
}

async function webFingerprint(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  let hex = "";
  for (let i = 0; i < digest.length; i++) hex += HEX[digest[i]!];
  return hex;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
