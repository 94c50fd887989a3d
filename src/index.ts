export {
  createReceiver,
  type Receiver,
  type ReceiverRequest,
  type EarlyRejection,
} from "./receiver/create-receiver.js";
export type { ReceiverHealth, HealthState, HealthOptions } from "./receiver/health.js";
export type { Answer, ReceiverResponse, FailureStatus } from "./answer/answer.js";
export { OUTCOMES, type Outcome } from "./answer/outcomes.js";
export type { ReceiverOptions } from "./receiver/options.js";
export { eventWebhook, type EventWebhookOptions } from "./receiver/event-webhook.js";
export type {
  ErrorHook,
  EventObjectFor,
  Handler,
  HandlerContext,
  HandlerFor,
  HandlerHooks,
  EventTypeOf,
  NotificationOf,
  SubscriptionHandlers,
} from "./dispatch/handlers.js";
export { handlerKeyFor } from "./dispatch/handlers.js";
export { defineHandlers, type DefinedHandlers } from "./dispatch/define-handlers.js";
export { HandlerTimeoutError, LeaseLostError } from "./dispatch/run-handler.js";
export type { HeaderSource } from "./receiver/headers.js";
export { memoryStore, type MemoryStoreOptions } from "./idempotency/memory-store.js";
export {
  StoreUnavailableError,
  type IdempotencyStore,
  type IdempotencyRecord,
  type ClaimRequest,
  type ClaimResult,
  type RecordState,
  type OrderClaim,
} from "./idempotency/store.js";
export { redactNotification, redactCardNumbers, REDACTED, type RedactOptions } from "./logging/redact.js";
export type { NotificationQueue, QueuedNotification } from "./queue/queue.js";
export * from "./schema/index.js";
export type { NotificationRecorder, RecordedNotification } from "./recording/recorder.js";
export { inProcessQueue, type InProcessQueue, type InProcessQueueOptions } from "./queue/in-process-queue.js";
export { QueueFullError } from "./queue/queue-full-error.js";
export * from "./verify/index.js";
export { jsonlRecorder, type JsonlRecorder, type JsonlRecorderOptions } from "./recording/jsonl-recorder.js";
export { redactForRecording, REDACTED_EMAIL, REDACTED_IP } from "./recording/replayable-redaction.js";
export { KEPT_HEADERS } from "./logging/kept-headers.js";
export { MAX_BODY_DEPTH } from "./receiver/nesting-depth.js";
export type { OrderingOption, OrderingOptions } from "./ordering/ordering-options.js";
export { parseNotification, NotificationError, type ParseNotificationOptions } from "./receiver/parse-notification.js";
