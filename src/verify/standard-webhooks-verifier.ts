import { coded } from "../shared/errors.js";
import { constantTimeEqual } from "./constant-time.js";
import { base64ToBytes } from "./encoding.js";
import { checkTolerance, DEFAULT_TOLERANCE_SECONDS, hmac, prefixed, strongEnough, timestampFailure } from "./hmac.js";
import { otherSignatureHeaders } from "./scheme-hints.js";
import { type SecretOption, secretKeys } from "./secret-keys.js";
import type { VerifyHook } from "./verify-hook.js";
import { explainingHook, failure, type VerifyOutcome } from "./verify-outcome.js";

/** A Standard Webhooks secret: `whsec_` followed by base64, plain base64, or the key bytes. */
export type StandardWebhooksSecret = string | Uint8Array;

export interface StandardWebhooksVerifierOptions {
  /** How far `webhook-timestamp` may be from now, in either direction. Default 300 (the specification's 5 minutes). */
  toleranceSeconds?: number;
}

const WHAT = "standardWebhooksVerifier";
const SECRET_PREFIX = "whsec_";

/**
 * The shortest key a Standard Webhooks verifier accepts: the specification has secrets of 24 to 64
 * random bytes (its own example secret is 24).
 */
export const MIN_STANDARD_WEBHOOKS_KEY_BYTES = 24;

/** The key bytes of a `whsec_…` or base64 secret; throws at start-up rather than failing every delivery. */
export function standardWebhooksKey(secret: StandardWebhooksSecret): Uint8Array {
  if (secret instanceof Uint8Array) {
    if (secret.length === 0) throw coded(new TypeError(`${WHAT}: a secret must not be empty`), "MW_INVALID_SECRET");
    return secret;
  }
  if (typeof secret !== "string")
    throw coded(new TypeError(`${WHAT}: a secret must be a string or bytes`), "MW_INVALID_SECRET");
  const key = base64ToBytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!key || key.length === 0) {
    throw coded(
      new TypeError(
        `${WHAT}: a secret must be "whsec_" followed by base64 (A-Z, a-z, 0-9, +, /, optional = padding); the one given is not valid base64`,
      ),
      "MW_INVALID_SECRET",
    );
  }
  return key;
}

/** A verifier's key: well-formed, and long enough that one signed delivery does not give it away. */
function verifyingKey(secret: StandardWebhooksSecret): Uint8Array {
  return strongEnough(standardWebhooksKey(secret), MIN_STANDARD_WEBHOOKS_KEY_BYTES, WHAT);
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
    family,
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
  const keys = secretKeys(secret, verifyingKey, "sha256", WHAT);

  return explainingHook(async (rawBody, headers): Promise<VerifyOutcome> => {
    const { family, id, timestamp, signatures } = signedHeaders(headers);
    if (!signatures || !id) {
      const missing = `${family}-${signatures ? "id" : "signature"}`;
      return failure(
        "no_signature_header",
        `no "${missing}" header${otherSignatureHeaders(headers, `${family}-signature`)}`,
      );
    }
    const stale = timestampFailure(timestamp, tolerance, `${family}-timestamp`);
    if (stale) return stale;

    const candidates: Uint8Array[] = [];
    const versions = new Set<string>();
    for (const entry of signatures.split(" ")) {
      const comma = entry.indexOf(",");
      if (comma < 0) continue;
      versions.add(entry.slice(0, comma));
      if (entry.slice(0, comma) !== "v1") continue;
      const bytes = base64ToBytes(entry.slice(comma + 1));
      if (bytes && bytes.length > 0) candidates.push(bytes);
    }
    if (candidates.length === 0) {
      if (versions.size > 0 && !versions.has("v1")) {
        const seen = [...versions].slice(0, 5).map((version) => shownVersion(version));
        return failure(
          "unknown_scheme",
          `"${family}-signature" has only ${seen.join(", ")} entries; this verifier checks v1`,
        );
      }
      return failure("malformed_header", `"${family}-signature" holds no "v1,<base64>" entry`);
    }

    const found = await keys(headers);
    if (!Array.isArray(found)) return found;
    const content = standardWebhookContent(id, timestamp!, rawBody);
    for (const [secretIndex, key] of found.entries()) {
      const expected = await hmac(key, content);
      if (candidates.some((candidate) => constantTimeEqual(candidate, expected))) return { ok: true, secretIndex };
    }
    return failure(
      "no_signature_matched",
      `${candidates.length} v1 signature(s) checked against ${found.length} secret(s), none matched`,
    );
  });
}

/** A version label as the sender wrote it, cut and limited to printable characters, for the log. */
const shownVersion = (version: string) => JSON.stringify(version.slice(0, 8).replace(/[^\x21-\x7e]/g, "?"));
