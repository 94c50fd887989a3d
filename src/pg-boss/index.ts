// merchant-webhooks/pg-boss: a durable queue in PostgreSQL (pg-boss), its worker and redrive.

export {
  type CreatePgBossWorkerOptions,
  createPgBossWorker,
  type PgBossNotificationWorker,
  type PgBossWorkerHealth,
} from "./create-pg-boss-worker.js";
export { discardDeadLetters, type PgBossDiscardOptions, type PgBossDiscardResult } from "./discard.js";
// Named for pg-boss: /bullmq's jobIdFor and redrive take other arguments.
export { jobIdFor as pgBossJobIdFor, PgBossSetupError } from "./job-table.js";
export {
  DEFAULT_PG_BOSS_JOB_OPTIONS,
  type PgBossJobOptions,
  type PgBossNotificationQueue,
  type PgBossQueueOptions,
  PgBossQueueUnavailableError,
  pgBossQueue,
} from "./pg-boss-queue.js";
export {
  PgBossQueueNotFoundError,
  type PgBossRedriveOptions,
  type PgBossRedriveResult,
  redrive as pgBossRedrive,
} from "./redrive.js";
