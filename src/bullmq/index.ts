export {
  bullmqQueue,
  DEFAULT_JOB_OPTIONS,
  QueueUnavailableError,
  type BullmqQueueOptions,
  type BullmqNotificationQueue,
} from "./bullmq-queue.js";
export {
  createWorker,
  DEFAULT_WORKER_HANDLER_TIMEOUT_MS,
  type CreateWorkerOptions,
  type NotificationWorker,
} from "./create-worker.js";
export type { JobOutcome } from "./process-job.js";
export {
  findQueues,
  type FoundQueue,
  QueueNotFoundError,
  redrive,
  type RedriveOptions,
  type RedriveResult,
} from "./redrive.js";
export { closeOnSignals, type Closable, type CloseOnSignalsOptions } from "../lifecycle/close-on-signals.js";
export type { CloseOptions } from "../lifecycle/close-options.js";
export { jobIdFor } from "./job-id.js";
export { sweepQueued, type SweepQueuedOptions, type SweepResult } from "./sweep-queued.js";
export type { QueueLedger, LedgerEntry } from "./queue-ledger.js";
export type { NotificationJobData } from "./job-data.js";
export type { RedisConnection } from "../redis/connect.js";
export { type EncryptionKey, type SealedPayload } from "./seal.js";
