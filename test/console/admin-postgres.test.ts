import { postgresStore } from "merchant-webhooks/postgres";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETENTION_SECONDS } from "../../src/idempotency/store.js";
import { listStatement } from "../../src/postgres/list-sql.js";
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

  it("serves a page of every state along the index: no scan of the whole table", async () => {
    const schema = uniqueSchema("console_plan");
    const pool = testPool(2);
    try {
      await freshSchema(pool, schema);
      const states = ["processing", "queued", "completed", "failed"];
      await pool.query(
        `INSERT INTO "${schema}".merchant_webhooks_inbox (id, fingerprint, state, attempts, updated_at)
         SELECT 'WH-' || i, 'fp', ($1::text[])[1 + i % 4], 1, now() - (i || ' ms')::interval
         FROM generate_series(1, 50000) i`,
        [states],
      );
      await pool.query(`ANALYZE "${schema}".merchant_webhooks_inbox`);
      const statement = listStatement(qualifiedNames({ schema }), DEFAULT_RETENTION_SECONDS);
      const plan = async (state: string | null, until: number | null) =>
        JSON.stringify(
          (await pool.query(`EXPLAIN (FORMAT JSON) ${statement}`, [state, null, null, until, null, null, 51, null]))
            .rows[0]["QUERY PLAN"],
        );
      for (const [state, until] of [
        [null, null],
        [null, Date.now() - 25_000],
        ["failed", null],
      ] as const) {
        const shown = await plan(state, until);
        expect(shown).not.toContain("Seq Scan");
        expect(shown).toContain("merchant_webhooks_inbox_list");
      }
    } finally {
      await dropSchema(pool, schema);
      await pool.end();
    }
  });
});
