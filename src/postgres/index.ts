// merchant-webhooks/postgres: the idempotency store whose record commits in the handler's own transaction.
import type { PoolClient } from "pg";

export { StoreUnavailableError } from "../idempotency/store.js";
export { TransactionClosedError, TransactionControlError, TransactionLostError } from "./guarded-transaction.js";
export { DEFAULT_SCHEMA, DEFAULT_TABLE, type TableNames } from "./names.js";
export {
  NotOrmTransactionError,
  type OrmTransaction,
  type OrmTransactions,
  ormTransactions,
  type RunInOrmTransaction,
  type StatementGate,
  type TransactionExecutor,
} from "./orm-transaction.js";
export {
  DEFAULT_POSTGRES_TIMEOUT_MS,
  type PostgresStore,
  type PostgresStoreOptions,
  postgresStore,
} from "./postgres-store.js";
export { type PurgeOptions, purge } from "./purge.js";
export { type MigrateConnection, type MigrateResult, migrate, postgresSchemaSql } from "./schema-sql.js";
export { SchemaTooNewError } from "./schema-version.js";
export { type IsolationLevel, MissingTableError, PoolExhaustedError } from "./sessions.js";

declare global {
  namespace MerchantWebhooks {
    interface TransactionTypes {
      /**
       * `ctx.transaction`: the pool client whose open transaction the record commits in, guarded: it
       * refuses transaction control, and every query once the run has settled; `release()` does nothing.
       */
      transaction: PoolClient;
    }
  }
}
