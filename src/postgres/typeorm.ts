// merchant-webhooks/postgres/typeorm: postgresStore's transactions opened by TypeORM.
import type { DataSource, EntityManager, QueryRunner } from "typeorm";
import { type OrmTransactions, ormTransactions } from "./orm-transaction.js";

/**
 * `postgresStore({ connection, orm: typeormTransactions(dataSource) })`: each handler's transaction
 * is `dataSource.transaction(...)`, and the handler writes with its `EntityManager`
 * (`orm.transactionOf(ctx)`): repositories, `save`, `query`; the record commits with those writes,
 * or neither does. The data source must be `type: "postgres"`.
 *
 * Every statement of the transaction's query runner passes the gate first, so once the run has
 * settled the manager refuses with `MW_TRANSACTION_CLOSED`; the store's own statements go through
 * the runner as it was. The store commits with its completion, in one message, and TypeORM's own
 * `COMMIT` after it is answered without being sent (`answersEnd`).
 */
export function typeormTransactions(dataSource: DataSource): OrmTransactions<EntityManager> {
  return ormTransactions((gate, work) =>
    dataSource.transaction(async (manager) => {
      const runner = manager.queryRunner as QueryRunner;
      const send = runner.query as (text: string, parameters?: unknown[], structured?: boolean) => Promise<unknown>;
      // The runner is this transaction's alone, dropped once it is released: the gate goes with it.
      runner.query = (async (text: string, parameters?: unknown[], structured?: boolean) => {
        // TypeORM's own COMMIT after the store's: the transaction is over already, nothing to send.
        if (gate.answered(text)) return structured ? { records: [] } : [];
        gate.check(text);
        return send.call(runner, text, parameters, structured);
      }) as QueryRunner["query"];
      // The manager's own `query` asks whether the runner was released before reaching it: gated here too.
      const managerQuery = manager.query.bind(manager);
      manager.query = (async (text: string, parameters?: unknown[]) => {
        gate.check(text);
        return managerQuery(text, parameters);
      }) as EntityManager["query"];
      const structured = async (text: string, values: unknown[]) =>
        (await send.call(runner, text, values, true)) as { records?: unknown[] };
      return work({
        executor: { query: async (text, values) => ({ rows: (await structured(text, values)).records ?? [] }) },
        handle: manager,
        answersEnd: true,
        // The runner's pg client, connected as the transaction began: the same for each transaction on it.
        connection: (await runner.connect()) as object,
      });
    }),
  );
}
