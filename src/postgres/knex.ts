// merchant-webhooks/postgres/knex: postgresStore's transactions opened by Knex.
import type { Knex } from "knex";
import type { ClientBase } from "pg";
import { type OrmTransactions, ormTransactions } from "./orm-transaction.js";

/** What of a Knex transaction's client the adapter reaches: its one connection, and where its statements go. */
interface TransactionClient {
  acquireConnection(): Promise<ClientBase>;
  query(connection: unknown, statement: string | { sql?: string }): Promise<unknown>;
}

/**
 * `postgresStore({ connection, orm: knexTransactions(knex) })`: each handler's transaction is
 * `knex.transaction(...)`, and the handler writes with its `trx` (`orm.transactionOf(ctx)`); the
 * record commits with those writes, or neither does. Knex must use the `pg` driver.
 *
 * The store's own statements go to the transaction's pg connection as they are (`$1` parameters, no
 * `?` rewriting); every statement `trx` sends passes the gate first, so once the run has settled
 * `trx` refuses with `MW_TRANSACTION_CLOSED`, and `trx.commit()` in a handler with
 * `MW_TRANSACTION_CONTROL`. The store commits with its completion, in one message, and Knex's own
 * `COMMIT` after it is answered without being sent (`answersEnd`).
 */
export function knexTransactions(knex: Knex): OrmTransactions<Knex.Transaction> {
  return ormTransactions((gate, work) =>
    knex.transaction(async (trx) => {
      // Knex makes a client per transaction, bound to its one connection: its `query` is trx's only way out.
      const client = trx.client as unknown as TransactionClient;
      const connection = await client.acquireConnection();
      const send = client.query;
      client.query = (conn, statement) => {
        const text = typeof statement === "string" ? statement : statement?.sql;
        // Knex's own COMMIT after the store's: the transaction is over already, nothing to send.
        if (gate.answered(text)) return Promise.resolve({ response: { rows: [] } });
        try {
          gate.check(text);
        } catch (refusal) {
          return Promise.reject(refusal);
        }
        return send.call(client, conn, statement);
      };
      return work({
        executor: { query: (text, values) => connection.query(text, values) },
        handle: trx,
        answersEnd: true,
        connection,
      });
    }),
  );
}
