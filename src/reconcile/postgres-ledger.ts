import type { Pool } from "pg";
import type { OrderLedger, OrderLedgerEntry } from "../client/order-ledger.js";
import { type ReconcileTableNames, reconcileTables } from "./postgres-tables.js";

/**
 * An order ledger in PostgreSQL (`<prefix>_ledger`, made by `migrateReconcile`): one row per
 * (merchant, reference id), read a window at a time by creation time on its own index. A closed order's
 * row is deleted, as the other ledgers forget it.
 */
export function postgresOrderLedger(pool: Pick<Pool, "query">, options: ReconcileTableNames = {}): OrderLedger {
  const { ledger } = reconcileTables(options);
  return {
    async record(entry) {
      await pool.query(
        `INSERT INTO ${ledger} (merchant_id, reference_id, entry, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (merchant_id, reference_id) DO UPDATE SET entry = excluded.entry, created_at = excluded.created_at`,
        [entry.merchant_id ?? "", entry.reference_id, JSON.stringify(entry), entry.created_at],
      );
    },
    async open({ from, to, after, limit }) {
      // `after.key` is `ledgerKey`: the merchant and the reference id around a NUL, which compares as
      // the pair does (NUL sorts first), so the page goes on from the pair, byte by byte ("C").
      const [merchant = "", reference = ""] = after?.key.split("\u0000") ?? [];
      const { rows } = await pool.query<{ entry: OrderLedgerEntry }>(
        `SELECT entry FROM ${ledger}
         WHERE created_at BETWEEN $1 AND $2
           AND ($3::bigint IS NULL OR (created_at, merchant_id, reference_id) > ($3::bigint, $4, $5))
         ORDER BY created_at, merchant_id, reference_id LIMIT $6`,
        [from, to, after?.created_at ?? null, merchant, reference, limit],
      );
      return rows.map((row) => row.entry);
    },
    async close(entry) {
      await pool.query(`DELETE FROM ${ledger} WHERE merchant_id = $1 AND reference_id = $2`, [
        entry.merchant_id ?? "",
        entry.reference_id,
      ]);
    },
  };
}
