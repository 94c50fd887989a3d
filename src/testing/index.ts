export { buildNotification, type BuildNotificationOptions, type NotificationOverrides } from "./build-notification.js";
export * from "./builders.js";
export type { DeepPartial } from "./deep-merge.js";
export {
  replay,
  replayEntries,
  type ReplayOptions,
  type ReplayResult,
  type ReplayTarget,
  type Signer,
} from "./replay.js";
export { readSource, SourceError, type ReplaySource, type SourceEntry } from "./read-source.js";
export { hmacSigner, standardWebhooksSigner } from "./signers.js";
export { signHmac, signStandardWebhook } from "../verify/sign.js";
export { redactForRecording, REDACTED_EMAIL, REDACTED_IP } from "../recording/replayable-redaction.js";
