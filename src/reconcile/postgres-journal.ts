import type { Pool } from "pg";
import type { ReconcileJournal, RunCheckpoint, SubscriptionSeen } from "./journal.js";
import { type ReconcileTableNames, reconcileTables } from "./postgres-tables.js";
import type { ReconcileReport } from "./report.js";

/**
 * The reconciler's journal in PostgreSQL (tables made by `migrateReconcile`). The run lock is a leased
 * row rather than an advisory lock: a session lock would pin a connection for the whole run and end
 * with it, where the run's lock must be renewed and lapse on the database's clock as the Redis one
 * does, so that a run killed mid-way is resumed once its lease is over, whichever process comes next.
 */
export function postgresJournal(pool: Pick<Pool, "query">, options: ReconcileTableNames = {}): ReconcileJournal {
  const t = reconcileTables(options);
  const rows = async <T extends object>(sql: string, params: unknown[] = []) => (await pool.query<T>(sql, params)).rows;
  return {
    async acquire(owner, ttlMs) {
      const taken = await rows(
        `INSERT INTO ${t.lock} (name, owner, lease_until) VALUES ('run', $1, clock_timestamp() + $2 * interval '1 millisecond')
         ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
           WHERE ${t.lock}.lease_until <= clock_timestamp() OR ${t.lock}.owner = excluded.owner
         RETURNING owner`,
        [owner, ttlMs],
      );
      return taken.length === 1;
    },
    async renew(owner, ttlMs) {
      const renewed = await rows(
        `UPDATE ${t.lock} SET lease_until = clock_timestamp() + $2 * interval '1 millisecond'
         WHERE name = 'run' AND owner = $1 AND lease_until > clock_timestamp() RETURNING owner`,
        [owner, ttlMs],
      );
      return renewed.length === 1;
    },
    async release(owner) {
      await pool.query(`DELETE FROM ${t.lock} WHERE name = 'run' AND owner = $1`, [owner]);
    },
    async checkpoint() {
      const [row] = await rows<{ checkpoint: string }>(`SELECT checkpoint FROM ${t.checkpoint} WHERE name = 'run'`);
      return row === undefined ? undefined : (JSON.parse(row.checkpoint) as RunCheckpoint);
    },
    async saveCheckpoint(checkpoint) {
      await pool.query(
        `INSERT INTO ${t.checkpoint} (name, checkpoint) VALUES ('run', $1)
         ON CONFLICT (name) DO UPDATE SET checkpoint = excluded.checkpoint`,
        [JSON.stringify(checkpoint)],
      );
    },
    async clearCheckpoint() {
      await pool.query(`DELETE FROM ${t.checkpoint} WHERE name = 'run'`);
    },
    async saveReport(report, keep) {
      await pool.query(`INSERT INTO ${t.reports} (report) VALUES ($1)`, [JSON.stringify(report)]);
      await pool.query(
        `DELETE FROM ${t.reports} WHERE seq < (SELECT min(seq) FROM (SELECT seq FROM ${t.reports} ORDER BY seq DESC LIMIT $1) AS newest)`,
        [keep],
      );
    },
    async reports(limit = 20) {
      const found = await rows<{ report: ReconcileReport }>(
        `SELECT report FROM ${t.reports} ORDER BY seq DESC LIMIT $1`,
        [limit],
      );
      return found.map((row) => row.report);
    },
    async seen(record) {
      await pool.query(
        `INSERT INTO ${t.subscriptions} (subscription_id, position, seen) VALUES ($1, $2, $3)
         ON CONFLICT (subscription_id) DO UPDATE SET position = excluded.position, seen = excluded.seen
           WHERE ${t.subscriptions}.position < excluded.position`,
        [record.subscription_id, record.position, JSON.stringify(record)],
      );
    },
    async subscriptions(cursor, limit = 500) {
      const found = await rows<{ seen: SubscriptionSeen; subscription_id: string }>(
        `SELECT subscription_id, seen FROM ${t.subscriptions}
         WHERE $1::text IS NULL OR subscription_id > $1 ORDER BY subscription_id LIMIT $2`,
        [cursor ?? null, limit],
      );
      const items = found.map((row) => row.seen);
      return { items, cursor: found.length === limit ? found.at(-1)!.subscription_id : undefined };
    },
    async mention(orderIds, at) {
      if (orderIds.length === 0) return;
      await pool.query(
        `INSERT INTO ${t.mentions} (order_id, at) SELECT unnest($1::text[]), $2
         ON CONFLICT (order_id) DO UPDATE SET at = greatest(${t.mentions}.at, excluded.at)`,
        [[...new Set(orderIds)], at],
      );
    },
    async mentioned(orderIds) {
      const found = await rows<{ order_id: string }>(
        `SELECT order_id FROM ${t.mentions} WHERE order_id = ANY($1::text[])`,
        [orderIds],
      );
      return new Set(found.map((row) => row.order_id));
    },
    async forgetMentions(before) {
      await pool.query(`DELETE FROM ${t.mentions} WHERE at < $1`, [before]);
    },
  };
}
