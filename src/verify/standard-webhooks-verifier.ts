import type { VerifyHook } from "./verify-hook.js";
import { constantTimeEqual } from "./constant-time.js";
import { base64ToBytes } from "./encoding.js";
import { checkTolerance, DEFAULT_TOLERANCE_SECONDS, hmac, hmacKeys, isFresh, prefixed } from "./hmac.js";

/** A Standard Webhooks secret: `whsec_` followed by base64, plain base64, or the key bytes. */
export type StandardWebhooksSecret = string | Uint8Array;

export interface StandardWebhooksVerifierOptions {
  /** How far `webhook-timestamp` may be from now, in either direction. Default 300 (the specification's 5 minutes). */
  toleranceSeconds?: number;
}

const WHAT = "standardWebhooksVerifier";
const SECRET_PREFIX = "whsec_";

/** The key bytes of a `whsec_…` or base64 secret; throws at start-up rather than failing every delivery. */
export function standardWebhooksKey(secret: StandardWebhooksSecret): Uint8Array {
  if (secret instanceof Uint8Array) {
    if (secret.length === 0) throw new TypeError(`${WHAT}: a secret must not be empty`);
    return secret;
  }
  if (typeof secret !== "string") throw new TypeError(`${WHAT}: a secret must be a string or bytes`);
  const key = base64ToBytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!key || key.length === 0) throw new TypeError(`${WHAT}: a secret must be "whsec_" followed by base64`);
  return key;
}

/** The signed content the specification defines: `${msg_id}.${timestamp}.${payload}`. */
export function standardWebhookContent(id: string, timestamp: string, body: Uint8Array): Uint8Array {
  return prefixed(`${id}.${timestamp}.`, body);
}

/**
 * A `verify` hook for the Standard Webhooks signature scheme (https://www.standardwebhooks.com):
 * HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}`, sent in `webhook-signature` as a
 * space-separated list of `v1,<base64>` entries. Entries of other versions (such as the asymmetric
 * `v1a`) are ignored. Pass several secrets while rotating.
 */
export function standardWebhooksVerifier(
  secret: StandardWebhooksSecret | readonly StandardWebhooksSecret[],
  options: StandardWebhooksVerifierOptions = {},
): VerifyHook {
  const secrets = (Array.isArray(secret) ? secret : [secret]) as readonly StandardWebhooksSecret[];
  if (secrets.length === 0) throw new TypeError(`${WHAT}: at least one secret is required`);
  const tolerance = checkTolerance(options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS, WHAT);
  const keys = hmacKeys(secrets.map(standardWebhooksKey), "sha256");

  return async (rawBody, headers) => {
    const id = headers["webhook-id"];
    const timestamp = headers["webhook-timestamp"];
    const signatures = headers["webhook-signature"];
    if (!id || !signatures || !isFresh(timestamp, tolerance)) return false;

    const candidates: Uint8Array[] = [];
    for (const entry of signatures.split(" ")) {
      const comma = entry.indexOf(",");
      if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
      const bytes = base64ToBytes(entry.slice(comma + 1));
      if (bytes && bytes.length > 0) candidates.push(bytes);
    }
    if (candidates.length === 0) return false;

    const content = standardWebhookContent(id, timestamp!, rawBody);
    for (const key of await keys()) {
      const expected = await hmac(key, content);
      if (candidates.some((candidate) => constantTimeEqual(candidate, expected))) return true;
    }
    return false;
  };
}
