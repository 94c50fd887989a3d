// merchant-webhooks/pg-boss: a durable queue in PostgreSQL (pg-boss), its worker and redrive.

export {
  type CreatePgBossWorkerOptions,
  createPgBossWorker,
  type PgBossNotificationWorker,
  type PgBossWorkerHealth,
} from "./create-pg-boss-worker.js";
export { discardDeadLetters, type PgBossDiscardOptions, type PgBossDiscardResult } from "./discard.js";
export { jobIdFor, PgBossSetupError } from "./job-table.js";
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
  redrive,
} from "./redrive.js";
