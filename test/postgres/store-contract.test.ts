import { afterAll, beforeAll } from "vitest";
import { migrate, postgresStore } from "merchant-webhooks/postgres";
import { orderContract } from "../idempotency/order-contract.js";
import { storeContract, transactionFencingContract } from "../idempotency/store-contract.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";

// The PostgreSQL store runs on the database's clock, with short real leases; each test gets its own table.
const schema = uniqueSchema("contract");
const pool = testPool();
let tables = 0;

beforeAll(async () => {
  await freshSchema(pool, schema);
});
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const freshPostgresStore = async ({ retentionSeconds }: { retentionSeconds?: number }) => {
  const table = `inbox_${++tables}`;
  await migrate(pool, { schema, table });
  return postgresStore({ connection: pool, schema, table, ...(retentionSeconds ? { retentionSeconds } : {}) });
};
storeContract("postgresStore", freshPostgresStore);
orderContract("postgresStore", freshPostgresStore);
transactionFencingContract("postgresStore", freshPostgresStore, {
  statement: "SELECT 1",
  control: ["COMMIT", "rollback", "/* first */ END", "-- first\nBEGIN", "ABORT", "START TRANSACTION"],
});
