export { type Closable, type CloseOnSignalsOptions, closeOnSignals } from "../receiver/close-on-signals.js";
export type { RedisConnection } from "../redis/connect.js";
export type { CloseOptions } from "../shared/close-options.js";
export type { NotificationJobData } from "../worker/job-data.js";
export { DEFAULT_WORKER_HANDLER_TIMEOUT_MS } from "../worker/run-settings.js";
export type { EncryptionKey, SealedPayload } from "../worker/seal.js";
export type { WorkerHealth } from "../worker/worker-lifecycle.js";
export {
  type BullmqNotificationQueue,
  type BullmqQueueOptions,
  bullmqQueue,
  DEFAULT_JOB_OPTIONS,
  QueueUnavailableError,
} from "./bullmq-queue.js";
export { type CreateWorkerOptions, createWorker, type NotificationWorker } from "./create-worker.js";
export { jobIdFor } from "./job-id.js";
export type { JobOutcome } from "./process-job.js";
export type { LedgerEntry, QueueLedger } from "./queue-ledger.js";
export {
  type FoundQueue,
  findQueues,
  QueueNotFoundError,
  type RedriveOptions,
  type RedriveResult,
  redrive,
} from "./redrive.js";
export { type SweepQueuedOptions, type SweepResult, sweepQueued } from "./sweep-queued.js";
