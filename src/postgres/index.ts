// merchant-webhooks/postgres: the idempotency store whose record commits in the handler's own transaction.
import type { PoolClient } from "pg";

export {
  postgresStore,
  DEFAULT_POSTGRES_TIMEOUT_MS,
  type PostgresStore,
  type PostgresStoreOptions,
} from "./postgres-store.js";
export { migrate, postgresSchemaSql } from "./schema-sql.js";
export { purge, type PurgeOptions } from "./purge.js";
export { MissingTableError, PoolExhaustedError, type IsolationLevel } from "./sessions.js";
export { TransactionClosedError, TransactionControlError } from "./guarded-transaction.js";
export { DEFAULT_SCHEMA, DEFAULT_TABLE, type TableNames } from "./names.js";
export { StoreUnavailableError } from "../idempotency/store.js";

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
