import type { HmacVerifierOptions } from "../verify/hmac-verifier.js";
import { signHmac, signStandardWebhook } from "../verify/sign.js";
import { type StandardWebhooksSecret, standardWebhooksKey } from "../verify/standard-webhooks-verifier.js";
import type { Signer } from "./replay.js";

/**
 * Signs each replayed body the way `hmacVerifier(options)` checks it: give both the same options.
 * With `timestamp`, each body is signed at the time it is sent, so old recordings pass the tolerance.
 */
export function hmacSigner(options: HmacVerifierOptions): Signer {
  return (body) => signHmac(body, options);
}

/** Signs each replayed body for `standardWebhooksVerifier(secret)`, with a fresh `webhook-id` and the current time. */
export function standardWebhooksSigner(secret: StandardWebhooksSecret): Signer {
  standardWebhooksKey(secret); // a malformed secret fails here, once, rather than on every body
  return (body) => signStandardWebhook(body, secret);
}
