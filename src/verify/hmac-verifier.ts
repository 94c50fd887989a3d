import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { constantTimeEqual } from "./constant-time.js";
import { base64ToBytes, hexToBytes } from "./encoding.js";
import {
  checkTolerance,
  DEFAULT_TOLERANCE_SECONDS,
  type HmacAlgorithm,
  type HmacSecret,
  hmac,
  hmacSecretBytes,
  MIN_HMAC_SECRET_BYTES,
  prefixed,
  strongEnough,
  timestampFailure,
} from "./hmac.js";
import { otherSignatureHeaders } from "./scheme-hints.js";
import { type SecretOption, secretKeys } from "./secret-keys.js";
import type { VerifyHook } from "./verify-hook.js";
import { explainingHook, failure, type VerifyOutcome } from "./verify-outcome.js";

export interface HmacVerifierOptions {
  /**
   * The shared secret, or several while one is being rotated: a delivery signed with any of them
   * passes. A string is used as its UTF-8 bytes. Or a function of the request headers that returns
   * them (or a promise of them), to pick a tenant's secret; keys are then imported once per distinct
   * secret and kept, up to `MAX_CACHED_SECRETS`, by the verifier.
   */
  secret: SecretOption<HmacSecret>;
  /** The header carrying the signature, e.g. `"x-signature"` (any case). */
  header: string;
  /** Default `"sha256"`. */
  algorithm?: HmacAlgorithm;
  /** How the signature is written in the header. Default `"hex"` (either case). */
  encoding?: "hex" | "base64";
  /** Text before each signature, e.g. `"sha256="`; required when set, and not part of the signature. */
  prefix?: string;
  /**
   * Sign a timestamp with the body, and refuse deliveries whose timestamp is further than
   * `toleranceSeconds` (default 300) from now in either direction: a captured delivery cannot be
   * replayed later, and a clock far ahead is not trusted either. The signed content is then
   * `${timestamp}${separator}${body}`, the timestamp in whole Unix seconds; `separator` defaults to ".".
   */
  timestamp?: { header: string; toleranceSeconds?: number; separator?: string };
}

const WHAT = "hmacVerifier";

/** The exact bytes an HMAC signature covers, shared by the verifier and `signHmac`. */
export function hmacSignedContent(
  body: Uint8Array,
  timestamp: string | undefined,
  options: HmacVerifierOptions,
): Uint8Array {
  return options.timestamp ? prefixed(`${timestamp}${options.timestamp.separator ?? "."}`, body) : body;
}

/**
 * A `verify` hook for an HMAC over the raw body (and optionally a timestamp). The header may carry
 * several signatures separated by commas or spaces, as a sender rotating its own secret sends them;
 * one match with any configured secret passes.
 */
const HMAC_KEYS: KnownKeys<HmacVerifierOptions> = {
  secret: true,
  header: true,
  algorithm: true,
  encoding: true,
  prefix: true,
  timestamp: true,
};
const TIMESTAMP_KEYS: KnownKeys<NonNullable<HmacVerifierOptions["timestamp"]>> = {
  header: true,
  toleranceSeconds: true,
  separator: true,
};

export function hmacVerifier(options: HmacVerifierOptions): VerifyHook {
  // A misspelt `timestamp` or `toleranceSeconds` would leave replays unchecked without a word.
  rejectUnknownKeys(WHAT, options, Object.keys(HMAC_KEYS));
  rejectUnknownKeys(`${WHAT}: timestamp`, options?.timestamp, Object.keys(TIMESTAMP_KEYS));
  const header = options.header?.toLowerCase();
  if (!header) throw optionError(new TypeError(`${WHAT}: header is required`), "MW_INVALID_OPTION", "header");
  const encoding = options.encoding ?? "hex";
  if (encoding !== "hex" && encoding !== "base64")
    throw optionError(new TypeError(`${WHAT}: encoding must be "hex" or "base64"`), "MW_INVALID_OPTION", "encoding");
  const decode = encoding === "hex" ? hexToBytes : base64ToBytes;
  const prefix = options.prefix ?? "";
  const timestampHeader = options.timestamp?.header.toLowerCase();
  if (options.timestamp && !timestampHeader)
    throw optionError(new TypeError(`${WHAT}: timestamp.header is required`), "MW_INVALID_OPTION", "timestamp.header");
  const tolerance = checkTolerance(options.timestamp?.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS, WHAT);
  // Byte arrays are taken as they are (a caller decoding its own key knows its strength); strings are
  // typed by people, and a short one is the usual weak secret.
  const keyBytes = (one: HmacSecret) => {
    const bytes = hmacSecretBytes(one, WHAT);
    return typeof one === "string" ? strongEnough(bytes, MIN_HMAC_SECRET_BYTES, WHAT) : bytes;
  };
  const keys = secretKeys(options.secret, keyBytes, options.algorithm ?? "sha256", WHAT);

  return explainingHook(async (rawBody, headers): Promise<VerifyOutcome> => {
    const sent = headers[header];
    if (!sent) return failure("no_signature_header", `no "${header}" header${otherSignatureHeaders(headers, header)}`);
    const timestamp = timestampHeader ? headers[timestampHeader] : undefined;
    if (timestampHeader) {
      const stale = timestampFailure(timestamp, tolerance, timestampHeader);
      if (stale) return stale;
    }

    const candidates: Uint8Array[] = [];
    let prefixed = 0;
    for (const part of sent.split(/[\s,]+/)) {
      if (!part.startsWith(prefix)) continue;
      prefixed++;
      const bytes = decode(part.slice(prefix.length));
      if (bytes && bytes.length > 0) candidates.push(bytes);
    }
    if (prefixed === 0) return failure("unknown_scheme", `no signature in "${header}" starts with "${prefix}"`);
    if (candidates.length === 0) return failure("malformed_header", `"${header}" holds no ${encoding} signature`);

    const found = await keys(headers);
    if (!Array.isArray(found)) return found;
    const content = hmacSignedContent(rawBody, timestamp, options);
    for (const [secretIndex, key] of found.entries()) {
      const expected = await hmac(key, content);
      if (candidates.some((candidate) => constantTimeEqual(candidate, expected))) return { ok: true, secretIndex };
    }
    return failure(
      "no_signature_matched",
      `${candidates.length} signature(s) in "${header}" checked against ${found.length} secret(s), none matched`,
    );
  });
}
