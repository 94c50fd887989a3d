// merchant-webhooks: what a merchant writes a receiver with. The rest lives in subpaths: the zod
// schemas and every type inferred from them in `merchant-webhooks/schema`, the framework adapters in
// `/express`, `/fastify`, `/next`, `/node`, `/fetch` and `/lambda`, Redis in `/redis`, BullMQ in
// `/bullmq`, builders, signing and replay in `/testing`, the payment API in `/client`, the platform
// simulator in `/simulator`. test/package-surface.test.ts keeps the count of values here small.

// The receiver, and its options for events other than the subscription notification.
export {
  createReceiver,
  type Receiver,
  type ReceiverRequest,
  type EarlyRejection,
} from "./receiver/create-receiver.js";
export type { ReceiverOptions } from "./receiver/options.js";
export type { ReceiverHealth, HealthState, HealthOptions } from "./receiver/health.js";
export type { HeaderSource } from "./receiver/headers.js";
export {
  eventReceiverOptions,
  eventWebhook,
  type EventReceiverOptions,
  type EventWebhookOptions,
} from "./receiver/event-receiver-options.js";
export { parseNotification, NotificationError, type ParseNotificationOptions } from "./receiver/parse-notification.js";
export { closeOnSignals, type Closable, type CloseOnSignalsOptions } from "./lifecycle/close-on-signals.js";
export type { CloseOptions } from "./lifecycle/close-options.js";
export { MAX_BODY_DEPTH } from "./receiver/nesting-depth.js";

// The answer the sender gets.
export type { Answer, ReceiverResponse, FailureStatus } from "./answer/answer.js";
export { OUTCOMES, type Outcome } from "./answer/outcomes.js";

// Handlers, their context, and the errors a handler may see.
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
export type { OrderingOption, OrderingOptions } from "./ordering/ordering-options.js";

// The notification: its schema and the types a handler is written with (every other schema and type
// is in `merchant-webhooks/schema`).
export { subscriptionNotificationSchema } from "./schema/notification.js";
export { eventObjectOf } from "./schema/notification-helpers.js";
export type {
  AnyEventObject,
  EventObject,
  EventObjectKey,
  EventType,
  KnownEventType,
  PaymentDetail,
  PaymentResult,
  OrderStatus,
  Product,
  RenewalEvent,
  ResumedEvent,
  Subscriber,
  SubscriptionEvent,
  SubscriptionNotification,
  SubscriptionResource,
  SubscriptionStatus,
  SuspendedEvent,
  UnsubscriptionEvent,
} from "./schema/types.js";

// Signature checks (signing, for senders and tests, is in `merchant-webhooks/testing`).
export {
  hmacVerifier,
  standardWebhooksVerifier,
  MAX_CACHED_SECRETS,
  type HmacAlgorithm,
  type HmacSecret,
  type HmacVerifierOptions,
  type SecretOption,
  type SecretResolver,
  type StandardWebhooksSecret,
  type StandardWebhooksVerifierOptions,
  type VerifyHook,
} from "./verify/index.js";

// Exactly once: the in-memory store and the interface every store implements.
export { memoryStore, type MemoryStoreOptions } from "./idempotency/memory-store.js";
export {
  StoreUnavailableError,
  type IdempotencyStore,
  type IdempotencyRecord,
  type ClaimRequest,
  type ClaimResult,
  type RecordState,
  type OrderClaim,
  type MailboxAppend,
} from "./idempotency/store.js";

// Processing after the answer.
export type { NotificationQueue, QueuedNotification } from "./queue/queue.js";
export { inProcessQueue, type InProcessQueue, type InProcessQueueOptions } from "./queue/in-process-queue.js";
export { QueueFullError } from "./queue/queue-full-error.js";

// Recording, and keeping card data out of the merchant's own logs.
export type { NotificationRecorder, RecordedNotification } from "./recording/recorder.js";
export { jsonlRecorder, type JsonlRecorder, type JsonlRecorderOptions } from "./recording/jsonl-recorder.js";
export { KEPT_HEADERS } from "./logging/kept-headers.js";
export { redactNotification, redactCardNumbers, REDACTED, type RedactOptions } from "./logging/redact.js";
