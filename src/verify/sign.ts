import { optionError } from "../shared/errors.js";
import { bytesToBase64, bytesToHex, utf8 } from "./encoding.js";
import { hmac, hmacKeys, secretList } from "./hmac.js";
import { type HmacVerifierOptions, hmacSignedContent } from "./hmac-verifier.js";
import {
  type StandardWebhooksSecret,
  standardWebhookContent,
  standardWebhooksKey,
} from "./standard-webhooks-verifier.js";

/** When a signature was made; defaults to now. Lets tests sign stale or future deliveries. */
export interface SignAt {
  /** Whole Unix seconds. */
  timestamp?: number;
}

const bytesOf = (body: Uint8Array | string) => (typeof body === "string" ? utf8.encode(body) : body);
const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * The headers a sender configured like `options` would attach to `body`, signed with the first
 * secret (the current one during a rotation). For tests, replay tools and local senders.
 */
export async function signHmac(
  body: Uint8Array | string,
  options: HmacVerifierOptions,
  at: SignAt = {},
): Promise<Record<string, string>> {
  if (typeof options.secret === "function")
    throw optionError(
      new TypeError("signHmac: give the secret itself; a sender signs with one secret, not a lookup"),
      "MW_INVALID_OPTION",
      "secret",
    );
  const [secret] = secretList(options.secret, "signHmac");
  const [key] = await hmacKeys([secret!], options.algorithm ?? "sha256")();
  const timestamp = options.timestamp ? String(at.timestamp ?? nowSeconds()) : undefined;
  const mac = await hmac(key!, hmacSignedContent(bytesOf(body), timestamp, options));
  const encoded = (options.encoding ?? "hex") === "hex" ? bytesToHex(mac) : bytesToBase64(mac);
  const headers: Record<string, string> = { [options.header.toLowerCase()]: `${options.prefix ?? ""}${encoded}` };
  if (options.timestamp && timestamp) headers[options.timestamp.header.toLowerCase()] = timestamp;
  return headers;
}

export interface StandardWebhookSignOptions extends SignAt {
  /** `webhook-id`; defaults to a fresh `msg_…` id. */
  id?: string;
}

/** `webhook-id`, `webhook-timestamp` and `webhook-signature` for `body`, as a Standard Webhooks sender sends them. */
export async function signStandardWebhook(
  body: Uint8Array | string,
  secret: StandardWebhooksSecret,
  options: StandardWebhookSignOptions = {},
): Promise<Record<string, string>> {
  const id = options.id ?? `msg_${crypto.randomUUID().replace(/-/g, "")}`;
  const timestamp = String(options.timestamp ?? nowSeconds());
  const [key] = await hmacKeys([standardWebhooksKey(secret)], "sha256")();
  const mac = await hmac(key!, standardWebhookContent(id, timestamp, bytesOf(body)));
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${bytesToBase64(mac)}` };
}
