export type { VerifyHook } from "./verify-hook.js";
export { hmacVerifier, type HmacVerifierOptions } from "./hmac-verifier.js";
export type { HmacAlgorithm, HmacSecret } from "./hmac.js";
export {
  standardWebhooksVerifier,
  type StandardWebhooksSecret,
  type StandardWebhooksVerifierOptions,
} from "./standard-webhooks-verifier.js";
export { signHmac, signStandardWebhook, type SignAt, type StandardWebhookSignOptions } from "./sign.js";
export { MAX_CACHED_SECRETS, type SecretOption, type SecretResolver } from "./secret-keys.js";
export type { SignatureFailureReason } from "./verify-outcome.js";
