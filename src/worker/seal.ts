import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { coded, MerchantWebhooksError } from "../shared/errors.js";

/** 32 bytes, or their base64: the key `bullmqQueue` seals job payloads with and `createWorker` opens them with. */
export type EncryptionKey = Uint8Array | string;

/** A job payload sealed with AES-256-GCM. Every field is base64 except the key id. */
export interface SealedPayload {
  /**
   * 3: the associated data is every other field of the job data (see `jobContext`), so none of them can
   * be changed; 2 (sealed before): all but `handoff` and `ledger`; 1: the notification id only.
   */
  v: 1 | 2 | 3;
  /** Which key sealed it, so workers holding several keys (during a rotation) pick the right one. */
  kid: string;
  iv: string;
  tag: string;
  data: string;
}

export class SealError extends MerchantWebhooksError {
  override name = "SealError";
  constructor(message: string) {
    super("MW_JOB_DATA_SEAL", message);
  }
}

const KEY_BYTES = 32;
const IV_BYTES = 12;

export interface SealingKey {
  id: string;
  key: Buffer;
}

export function sealingKey(input: EncryptionKey): SealingKey {
  const key = typeof input === "string" ? keyFromBase64(input) : Buffer.from(input);
  if (key.length !== KEY_BYTES)
    throw coded(new RangeError(`encryptionKey must be 32 bytes (AES-256), got ${key.length}`), "MW_INVALID_SECRET");
  if (key.every((byte) => byte === key[0]))
    throw coded(
      new RangeError(
        'encryptionKey is one byte repeated 32 times, not a random key; generate one with crypto.randomBytes(32).toString("base64")',
      ),
      "MW_WEAK_SECRET",
    );
  // A fingerprint of the key, not the key: it only tells keys apart.
  const id = createHash("sha256").update("merchant-webhooks job key").update(key).digest("hex").slice(0, 16);
  return { id, key };
}

/**
 * The bytes of a base64 key, strictly: Node's decoder skips characters outside the alphabet and
 * ignores leftover bits, so a typo or a truncated key would otherwise become another key in silence.
 * Standard or URL-safe alphabet, padding optional, and the text must be the canonical encoding.
 */
function keyFromBase64(text: string): Buffer {
  const fix = 'generate one with crypto.randomBytes(32).toString("base64")';
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) && !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) {
    throw coded(
      new RangeError(`encryptionKey must be base64 of 32 bytes; it holds characters outside base64 (${fix})`),
      "MW_INVALID_SECRET",
    );
  }
  const key = Buffer.from(text, "base64");
  const canonical = text.includes("-") || text.includes("_") ? key.toString("base64url") : key.toString("base64");
  if (canonical.replace(/=+$/, "") !== text.replace(/=+$/, "")) {
    throw coded(
      new RangeError(
        `encryptionKey is not valid base64 of ${KEY_BYTES} bytes (${text.length} characters; 32 bytes are 44 with padding): truncated or mistyped? ${fix}`,
      ),
      "MW_INVALID_SECRET",
    );
  }
  return key;
}

/**
 * Seal `text`, bound to `context` (the job's other fields) so neither the payload can be moved to
 * another job nor the fields beside it changed.
 */
export function seal(text: string, key: SealingKey, context: string): SealedPayload {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key.key, iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const data = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return {
    v: 3,
    kid: key.id,
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    data: data.toString("base64"),
  };
}

/** The text `seal` was given; throws `SealError` when no key fits or the payload was altered. */
export function open(sealed: SealedPayload, keys: readonly SealingKey[], context: string): string {
  const key = keys.find((k) => k.id === sealed.kid);
  if (!key) throw new SealError("job data is sealed with a key this worker was not given (encryptionKey)");
  try {
    const decipher = createDecipheriv("aes-256-gcm", key.key, Buffer.from(sealed.iv, "base64"));
    decipher.setAAD(Buffer.from(context, "utf8"));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]).toString("utf8");
  } catch {
    throw new SealError(
      "job data failed its integrity check: the payload or a field beside it (id, order, fingerprint, headers, handoff, ledger) was altered",
    );
  }
}

/** A worker's `encryptionKey` option (one key, or the new and the old during a rotation) as sealing keys. */
export function sealingKeys(input: EncryptionKey | readonly EncryptionKey[] | undefined): SealingKey[] {
  if (input === undefined) return [];
  const list: readonly EncryptionKey[] =
    typeof input === "string" || input instanceof Uint8Array ? [input] : (input as readonly EncryptionKey[]);
  return list.map(sealingKey);
}
