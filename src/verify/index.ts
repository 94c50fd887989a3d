export type { HmacAlgorithm, HmacSecret } from "./hmac.js";
export { type HmacVerifierOptions, hmacVerifier } from "./hmac-verifier.js";
export { MAX_CACHED_SECRETS, type SecretOption, type SecretResolver } from "./secret-keys.js";
export { type SignAt, type StandardWebhookSignOptions, signHmac, signStandardWebhook } from "./sign.js";
export {
  type StandardWebhooksSecret,
  type StandardWebhooksVerifierOptions,
  standardWebhooksVerifier,
} from "./standard-webhooks-verifier.js";
export type { VerifyHook } from "./verify-hook.js";
export type { SignatureFailureReason } from "./verify-outcome.js";
