import type { VerifyHook } from "./verify-hook.js";
import { constantTimeEqual } from "./constant-time.js";
import { base64ToBytes } from "./encoding.js";
import { checkTolerance, DEFAULT_TOLERANCE_SECONDS, hmac, isFresh, prefixed } from "./hmac.js";
import { secretKeys, type SecretOption } from "./secret-keys.js";

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
 * The id, timestamp and signature headers of a delivery. Svix, which the specification grew out of,
 * sends the same values under `svix-*` names (and its own library accepts both), so those are read
 * when no `webhook-id` is present. The three always come from one family: a delivery is signed as a
 * whole, and mixing families would only let a wrong header win.
 */
function signedHeaders(headers: Readonly<Record<string, string>>) {
  const family = headers["webhook-id"] === undefined && headers["svix-id"] !== undefined ? "svix" : "webhook";
  return {
    id: headers[`${family}-id`],
    timestamp: headers[`${family}-timestamp`],
    signatures: headers[`${family}-signature`],
  };
}

/**
 * A `verify` hook for the Standard Webhooks signature scheme (https://www.standardwebhooks.com):
 * HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${body}`, sent in `webhook-signature` as a
 * space-separated list of `v1,<base64>` entries (or the same under `svix-*` header names). Entries of
 * other versions (such as the asymmetric `v1a`) are ignored. Pass several secrets while rotating, or a
 * function of the headers that picks them per delivery.
 */
export function standardWebhooksVerifier(
  secret: SecretOption<StandardWebhooksSecret>,
  options: StandardWebhooksVerifierOptions = {},
): VerifyHook {
  const tolerance = checkTolerance(options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS, WHAT);
  const keys = secretKeys(secret, standardWebhooksKey, "sha256", WHAT);

  return async (rawBody, headers) => {
    const { id, timestamp, signatures } = signedHeaders(headers);
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
    for (const key of await keys(headers)) {
      const expected = await hmac(key, content);
      if (candidates.some((candidate) => constantTimeEqual(candidate, expected))) return true;
    }
    return false;
  };
}
