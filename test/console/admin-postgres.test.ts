import { postgresStore } from "merchant-webhooks/postgres";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETENTION_SECONDS } from "../../src/idempotency/store.js";
import { listStatements } from "../../src/postgres/list-sql.js";
import { qualifiedNames } from "../../src/postgres/names.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { adminContract } from "./admin-contract.js";

adminContract("postgres", async () => {
  const schema = uniqueSchema("console");
  const pool = testPool();
  await freshSchema(pool, schema);
  return {
    store: postgresStore({ connection: pool, schema }),
    async cleanup() {
      await dropSchema(pool, schema);
      await pool.end();
    },
  };
});

describe("postgresStore's list index", () => {
  it("is created by migrate(), and the list pages by it", async () => {
    const schema = uniqueSchema("console_index");
    const pool = testPool(2);
    try {
      await freshSchema(pool, schema);
      const { rows } = await pool.query(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'merchant_webhooks_inbox_list'",
        [schema],
      );
      expect(rows.map((row) => row.indexdef)).toEqual([expect.stringContaining("USING btree (state, updated_at, id)")]);
      // migrate() stays safe to run again on every deploy.
      await freshSchema(pool, schema);
    } finally {
      await dropSchema(pool, schema);
      await pool.end();
    }
  });

  it("serves a page of every filter along an index: no scan of the whole table", async () => {
    const schema = uniqueSchema("console_plan");
    const pool = testPool(2);
    try {
      await freshSchema(pool, schema);
      const states = ["processing", "queued", "completed", "failed"];
      await pool.query(
        `INSERT INTO "${schema}".merchant_webhooks_inbox (id, fingerprint, state, attempts, updated_at, event_type, subscription_id)
         SELECT 'WH-' || i, 'fp', ($1::text[])[1 + i % 4], 1, now() - (i || ' ms')::interval,
           'TYPE_' || (i % 4), 'SUB-' || (i % 50)
         FROM generate_series(1, 50000) i`,
        [states],
      );
      await pool.query(`ANALYZE "${schema}".merchant_webhooks_inbox`);
      const statements = listStatements(qualifiedNames({ schema }), DEFAULT_RETENTION_SECONDS);
      const plan = async (statement: string, values: Partial<Record<1 | 4 | 9 | 10, unknown>>) => {
        const all: unknown[] = [null, null, null, null, null, null, 51, null, null, null];
        for (const [at, value] of Object.entries(values)) all[Number(at) - 1] = value;
        return JSON.stringify((await pool.query(`EXPLAIN (FORMAT JSON) ${statement}`, all)).rows[0]["QUERY PLAN"]);
      };
      for (const [statement, values, index] of [
        [statements.byState, {}, "merchant_webhooks_inbox_list"],
        [statements.byState, { 4: Date.now() - 25_000 }, "merchant_webhooks_inbox_list"],
        [statements.byState, { 1: "failed" }, "merchant_webhooks_inbox_list"],
        [statements.byEventType, { 9: "TYPE_3" }, "merchant_webhooks_inbox_event_type"],
        [statements.bySubscription, { 10: "SUB-7" }, "merchant_webhooks_inbox_subscription"],
      ] as const) {
        const shown = await plan(statement, values);
        expect(shown).not.toContain("Seq Scan");
        expect(shown).toContain(index);
        // Read in the page's order: no sort of every matching row (byState sorts the merged pages only).
        if (statement !== statements.byState) expect(shown).not.toContain('"Node Type":"Sort"');
      }
    } finally {
      await dropSchema(pool, schema);
      await pool.end();
    }
  });
});
