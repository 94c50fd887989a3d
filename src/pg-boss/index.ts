// merchant-webhooks/pg-boss: a durable queue in PostgreSQL (pg-boss), its worker and redrive.
export {
  pgBossQueue,
  DEFAULT_PG_BOSS_JOB_OPTIONS,
  PgBossQueueUnavailableError,
  type PgBossQueueOptions,
  type PgBossJobOptions,
  type PgBossNotificationQueue,
} from "./pg-boss-queue.js";
export {
  createPgBossWorker,
  type CreatePgBossWorkerOptions,
  type PgBossNotificationWorker,
  type PgBossWorkerHealth,
} from "./create-pg-boss-worker.js";
export {
  redrive,
  PgBossQueueNotFoundError,
  type PgBossRedriveOptions,
  type PgBossRedriveResult,
} from "./redrive.js";
export { jobIdFor, PgBossSetupError } from "./job-table.js";
