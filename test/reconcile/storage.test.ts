import { memoryOrderLedger } from "merchant-webhooks/client";
import {
  memoryJournal,
  migrateReconcile,
  postgresJournal,
  postgresOrderLedger,
  reconcileSchemaSql,
  redisJournal,
  redisOrderLedger,
} from "merchant-webhooks/reconcile";
import { afterAll, describe, expect, it } from "vitest";
import { dropSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { describeReconcileStorage } from "./storage-contract.js";
import { redisTestBed } from "./support.js";

const { redis, newPrefix } = redisTestBed("reconcile-storage");
const pool = testPool(4);
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});
const freshSchema = () => {
  const schema = uniqueSchema("reconcile");
  schemas.push(schema);
  return schema;
};

describeReconcileStorage("memory", async () => ({ ledger: memoryOrderLedger(), journal: memoryJournal() }));

describeReconcileStorage("redis", async () => {
  const prefix = newPrefix();
  return { ledger: redisOrderLedger(redis, { prefix }), journal: redisJournal(redis, { prefix }) };
});

describeReconcileStorage("postgres", async () => {
  const schema = freshSchema();
  await migrateReconcile(pool, { schema });
  return { ledger: postgresOrderLedger(pool, { schema }), journal: postgresJournal(pool, { schema }) };
});

describe("the reconcile tables' set-up in PostgreSQL", () => {
  it("two migrations at once: one runs the steps, the other finds nothing to do; again, nothing", async () => {
    const schema = freshSchema();
    const results = await Promise.all([migrateReconcile(pool, { schema }), migrateReconcile(pool, { schema })]);
    expect(results.map((result) => result.steps).sort()).toEqual([[], [1, 2]]);
    expect(await migrateReconcile(pool, { schema, prefix: "merchant_webhooks_reconcile" })).toEqual({
      from: 2,
      to: 2,
      steps: [],
    });
    const { rows } = await pool.query(`SELECT version FROM "${schema}".merchant_webhooks_reconcile_version ORDER BY 1`);
    expect(rows).toEqual([{ version: 1 }, { version: 2 }]);
  });

  it("the shipped SQL can be run twice, and a misspelt name is refused before any SQL", async () => {
    const schema = freshSchema();
    const sql = reconcileSchemaSql({ schema, prefix: "recon" });
    await pool.query(sql);
    await pool.query(sql);
    expect(await migrateReconcile(pool, { schema, prefix: "recon" })).toMatchObject({ from: 2, steps: [] });
    expect(() => reconcileSchemaSql({ schema: "Public; DROP" })).toThrow(
      /schema "Public; DROP" is not a plain identifier/,
    );
  });
});
