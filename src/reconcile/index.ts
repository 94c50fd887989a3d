// merchant-webhooks/reconcile: find what the platform never delivered, and repair it once.

export { type ConfirmedRenewalContext, type ConfirmRenewalOptions, confirmRenewal } from "./confirm-renewal.js";
export {
  createReconciler,
  DEFAULT_FINAL_STATUSES,
  DEFAULT_INITIAL_STATUSES,
  type OverdueRenewal,
  type ReconcileMode,
  type Reconciler,
  type ReconcilerOptions,
} from "./create-reconciler.js";
export { memoryJournal, type ReconcileJournal, type RunCheckpoint, type SubscriptionSeen } from "./journal.js";
export {
  applyOrderStatusOnce,
  ORDER_STATUS_FINGERPRINT,
  type OrderStatusOutcome,
  oncePerOrderStatus,
  orderStatusKey,
  orderStatusRecord,
  type ReconcilableOrderEvent,
} from "./order-status-once.js";
export { postgresJournal } from "./postgres-journal.js";
export { postgresOrderLedger } from "./postgres-ledger.js";
export {
  DEFAULT_RECONCILE_TABLE_PREFIX,
  migrateReconcile,
  type ReconcileTableNames,
  reconcileSchemaSql,
} from "./postgres-tables.js";
export { DEFAULT_RECONCILE_PREFIX, redisJournal } from "./redis-journal.js";
export { redisOrderLedger } from "./redis-ledger.js";
export type { ReconcileError, ReconcileGap, ReconcileReport } from "./report.js";
export {
  RECONCILE_JOB_NAME,
  type ReconcileSchedule,
  type ScheduleHooks,
  scheduleEvery,
  scheduleOnBullmq,
  scheduleOnPgBoss,
} from "./schedule.js";
export { trackSubscriptions } from "./track-subscriptions.js";
