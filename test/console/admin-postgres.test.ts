import { postgresStore } from "merchant-webhooks/postgres";
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
