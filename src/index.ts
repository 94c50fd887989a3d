// merchant-webhooks: what a merchant writes a receiver with. The rest lives in subpaths: the zod
// schemas and every type inferred from them in `merchant-webhooks/schema`, the framework adapters in
// `/express`, `/fastify`, `/next`, `/node`, `/fetch` and `/lambda`, Redis in `/redis`, BullMQ in
// `/bullmq`, builders, signing and replay in `/testing`, the payment API in `/client`, the platform
// simulator in `/simulator`. test/package-surface.test.ts keeps the count of values here small.

// The receiver, and its options for events other than the subscription notification.

export { type Closable, type CloseOnSignalsOptions, closeOnSignals } from "./receiver/close-on-signals.js";
export {
  createReceiver,
  type EarlyRejection,
  type Receiver,
  type ReceiverRequest,
} from "./receiver/create-receiver.js";
export { type EventReceiverOptions, eventReceiverOptions } from "./receiver/event-receiver-options.js";
export type { HealthOptions, HealthState, ReceiverHealth } from "./receiver/health.js";
export type { HeaderSource } from "./receiver/intake.js";
export type { ReceiverOptions } from "./receiver/options.js";
export { MAX_BODY_DEPTH } from "./receiver/parse-json.js";
export { NotificationError, type ParseNotificationOptions, parseNotification } from "./receiver/parse-notification.js";
export type { CloseOptions } from "./shared/close-options.js";

// The answer the sender gets.

export { OUTCOMES, type Outcome } from "./dispatch/outcomes.js";
export type { Answer, FailureStatus, ReceiverResponse } from "./receiver/answer-and-log.js";

// The base of every error the package throws, with its stable `code` (docs/errors.md).

export { MerchantWebhooksError } from "./shared/errors.js";

// Handlers, their context, and the errors a handler may see.

export type {
  ErrorHook,
  EventObjectFor,
  EventTypeOf,
  Handler,
  HandlerContext,
  HandlerFor,
  HandlerHooks,
  NotificationOf,
  SubscriptionHandlers,
} from "./dispatch/handlers.js";
export { type DefinedHandlers, defineHandlers } from "./dispatch/handlers.js";
export { NonRetriableError, RetryAfterError, type SteeringErrorOptions } from "./dispatch/retry-errors.js";
export { HandlerTimeoutError, handlerKeyFor, LeaseLostError } from "./dispatch/run-claimed.js";
export type { OrderingOption, OrderingOptions } from "./receiver/options.js";

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
  OrderStatus,
  PaymentDetail,
  PaymentResult,
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
  type HmacAlgorithm,
  type HmacSecret,
  type HmacVerifierOptions,
  hmacVerifier,
  MAX_CACHED_SECRETS,
  type SecretOption,
  type SecretResolver,
  type StandardWebhooksSecret,
  type StandardWebhooksVerifierOptions,
  standardWebhooksVerifier,
  type VerifyHook,
} from "./verify/index.js";

// Exactly once: the in-memory store and the interface every store implements.

export { type ClaimFlags, claimFlags } from "./idempotency/claim-flags.js";
export type { LaneMaxLengthOption } from "./idempotency/lane-store.js";
export { type MemoryStore, type MemoryStoreOptions, memoryStore } from "./idempotency/memory-store.js";
export {
  type AppendClaim,
  type ClaimBase,
  type ClaimRequest,
  type ClaimResult,
  type DrainedLaneStore,
  type EnqueueClaim,
  type HeldLanes,
  type IdempotencyRecord,
  type IdempotencyStore,
  type LaneAppend,
  type LaneStore,
  type ListedAs,
  type OrderClaim,
  type RecordState,
  type RunClaim,
  type StalledLane,
  type StalledLanesQuery,
  StoreUnavailableError,
  type TakeClaim,
  type WokenLane,
} from "./idempotency/store.js";

// Processing after the answer.

export type { InProcessQueue, InProcessQueueOptions } from "./queue/in-process-queue.js";
export type { NotificationQueue, QueuedNotification, RunAgain } from "./queue/queue.js";
export { QueueFullError } from "./queue/queue-full-error.js";
export { inProcessQueue } from "./worker/in-process-queue.js";

// Recording, and keeping card data out of the merchant's own logs.

export { type JsonlRecorder, type JsonlRecorderOptions, jsonlRecorder } from "./logging/jsonl-recorder.js";
export { KEPT_HEADERS } from "./logging/kept-headers.js";
export type { NotificationRecorder, RecordedNotification } from "./logging/recorder.js";
export { REDACTED, type RedactOptions, redactCardNumbers, redactNotification } from "./logging/redact.js";
