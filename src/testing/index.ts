export { REDACTED_EMAIL, REDACTED_IP, redactForRecording } from "../logging/replayable-redaction.js";
export { signHmac, signStandardWebhook } from "../verify/sign.js";
export { type BuildNotificationOptions, buildNotification, type NotificationOverrides } from "./build-notification.js";
export * from "./builders.js";
export type { DeepPartial } from "./deep-merge.js";
export { type ReplaySource, readSource, type SourceEntry, SourceError } from "./read-source.js";
export {
  type ReplayOptions,
  type ReplayResult,
  type ReplayTarget,
  replay,
  replayEntries,
  type Signer,
} from "./replay.js";
export { hmacSigner, standardWebhooksSigner } from "./signers.js";
