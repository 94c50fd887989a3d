import { postgresStore } from "merchant-webhooks/postgres";
import { describe, expect, it } from "vitest";
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
});
