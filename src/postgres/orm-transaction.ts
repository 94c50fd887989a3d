import { MerchantWebhooksError } from "../shared/errors.js";
import { controlError, TransactionClosedError } from "./guarded-transaction.js";

/**
 * Runs one statement in the transaction it was made for: `text` with `$1`-style parameters, `values`
 * in order, answering the statement's rows. The shape of pg's `client.query`, of Kysely's
 * `executeQuery(CompiledQuery.raw(text, values))`, of pg-boss's `executeSql`: the one thing
 * `postgresStore` needs of an ORM's transaction to claim, complete and keep the ordering state in it.
 */
export interface TransactionExecutor {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Checked before each statement the handler's handle sends: while the handler runs, it refuses
 * transaction control (`MW_TRANSACTION_CONTROL`); once the run has settled, everything but the ORM's own
 * `COMMIT` or `ROLLBACK` that ends the transaction (`MW_TRANSACTION_CLOSED`); once the transaction is
 * over, everything. It throws; `text` is undefined where the ORM shows no text (then only the state counts).
 */
export interface StatementGate {
  check(text: string | undefined): void;
  /**
   * Whether `text` is the ORM's own end of the transaction (`COMMIT`, `ROLLBACK`) once the store has
   * committed the transaction itself, its last statement and `COMMIT` in one message: then the adapter
   * answers it without sending it (the transaction is over on the server). Asked only by an adapter
   * whose transaction says `answersEnd`; false for any other statement, and before.
   */
  answered(text: string | undefined): boolean;
}

/** A transaction the ORM opened, as the store and the handler use it. */
export interface OrmTransaction<Handle> {
  /** What the store sends its own statements through. */
  executor: TransactionExecutor;
  /** `ctx.transaction`: the ORM's own transaction object, its statements passing the gate first. */
  handle: Handle;
  /**
   * The adapter asks `gate.answered(text)` before each statement of the ORM's and, when true, answers
   * it without sending it. The store then commits with its own last statement, one message, and the
   * ORM's `COMMIT` costs no round trip: a first delivery takes four, a duplicate three (five and four
   * without). Default false: the ORM's `COMMIT` ends the transaction. Knex's and TypeORM's adapters say it.
   */
  answersEnd?: boolean;
  /**
   * The driver's connection the transaction runs on, the same object for every transaction on that
   * connection (Knex's and TypeORM's pg client, a pool's client): given, the store prepares its
   * first-delivery claim and completion on the connection, a statement of their own the first time
   * only, and runs them by name from then on; without it, it sends their text, which the server parses
   * and plans every time.
   */
  connection?: object;
}

/**
 * Open a transaction the ORM's way, give `work` its executor and handle, commit when `work` resolves,
 * roll back when it rejects (rejecting with its error), as `knex.transaction(cb)`,
 * `dataSource.transaction(cb)`, `db.transaction(cb)` in Drizzle and `db.transaction().execute(cb)` in
 * Kysely all do.
 */
export type RunInOrmTransaction<Handle> = <T>(
  gate: StatementGate,
  work: (transaction: OrmTransaction<Handle>) => Promise<T>,
) => Promise<T>;

/**
 * An ORM's transactions for `postgresStore({ orm })`: the store opens each handler's transaction
 * through the ORM, and the handler writes with the ORM's own transaction object.
 */
export interface OrmTransactions<Handle> {
  readonly run: RunInOrmTransaction<Handle>;
  /**
   * `ctx.transaction` as this ORM's transaction object (`ctx.transaction` is typed as the default's
   * pg client); throws `MW_NOT_ORM_TRANSACTION` when the context holds none of this ORM's.
   */
  transactionOf(ctx: { readonly transaction?: unknown }): Handle;
}

/** `transactionOf` on a context whose `ctx.transaction` this ORM did not open. */
export class NotOrmTransactionError extends MerchantWebhooksError {
  override name = "NotOrmTransactionError";
  declare readonly code: "MW_NOT_ORM_TRANSACTION";
  constructor() {
    super(
      "MW_NOT_ORM_TRANSACTION",
      "ctx.transaction was not opened by this ORM: pass the same adapter as postgresStore({ orm }), and read it in a handler the store runs",
    );
  }
}

/**
 * The adapter for an ORM from the way it runs a transaction (see `RunInOrmTransaction`), with
 * `transactionOf` knowing each handle it gave out.
 */
export function ormTransactions<Handle>(run: RunInOrmTransaction<Handle>): OrmTransactions<Handle> {
  const handles = new WeakSet<object>();
  return {
    run: (gate, work) =>
      run(gate, (transaction) => {
        if (isObject(transaction.handle)) handles.add(transaction.handle);
        return work(transaction);
      }),
    transactionOf(ctx) {
      const handle = ctx?.transaction;
      if (!isObject(handle) || !handles.has(handle)) throw new NotOrmTransactionError();
      return handle as Handle;
    },
  };
}

const isObject = (value: unknown): value is object =>
  (typeof value === "object" || typeof value === "function") && value !== null;

/** A gate for one transaction, and the switches the store moves it on with. */
export interface GateSwitch {
  readonly gate: StatementGate;
  /** The run has settled: the ORM's own end of the transaction is the only statement let through. */
  ending(): void;
  /** The store committed the transaction itself: the ORM's own end of it is answered without being sent. */
  committed(): void;
  /** The transaction is over: nothing is let through. */
  close(): void;
}

export function statementGate(): GateSwitch {
  let state: "open" | "ending" | "committed" | "closed" = "open";
  return {
    gate: {
      answered: (text) => state === "committed" && text !== undefined && controlError(text) !== undefined,
      check(text) {
        if (state === "open") {
          const refusal = text === undefined ? undefined : controlError(text);
          if (refusal) throw refusal;
          return;
        }
        if (state === "ending" && text !== undefined && controlError(text) !== undefined) return;
        throw new TransactionClosedError();
      },
    },
    ending() {
      if (state === "open") state = "ending";
    },
    committed() {
      if (state !== "closed") state = "committed";
    },
    close() {
      state = "closed";
    },
  };
}
