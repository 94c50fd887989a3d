import { existsSync, readFileSync } from "node:fs";
import { createReceiver } from "merchant-webhooks";
import { migrate, postgresSchemaSql, postgresStore, purge, StoreUnavailableError } from "merchant-webhooks/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, freePort } from "../support/redis.js";

const schema = uniqueSchema("purge");
const pool = testPool();
const store = postgresStore({ connection: pool, schema });
const answer = { processed: true, message: "processed" };

beforeAll(async () => {
  await freshSchema(pool, schema);
});
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

describe("the inbox tables", () => {
  it("not migrated: start-up says so and names migrate(pool), after postgresql ready", async () => {
    const unmigrated = uniqueSchema("unmigrated");
    const { logger, lines } = captureLogger();
    const receiver = createReceiver({ logger, idempotency: postgresStore({ connection: pool, schema: unmigrated }) });
    try {
      const missing = `the inbox table "${unmigrated}"."merchant_webhooks_inbox" does not exist: run migrate(pool, { schema: "${unmigrated}", table: "merchant_webhooks_inbox" })`;
      await eventually(async () => lines().some((line) => line.msg?.startsWith(missing)), 20_000, "the warning");
      const messages = lines().map((line) => line.msg);
      expect(messages.indexOf("postgresql ready")).toBeLessThan(messages.findIndex((msg) => msg?.startsWith(missing)));
      expect(lines().find((line) => line.msg?.startsWith(missing))).toMatchObject({ level: 40, store: "postgres" });
    } finally {
      await receiver.close();
    }
  });

  it("migrate(pool) with PostgreSQL out of reach rejects with the store's error, naming where it tried", async () => {
    const port = await freePort();
    const nowhere = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` });
    try {
      const failure = await migrate(nowhere).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect((failure as Error).message).toMatch(
        new RegExp(
          `^migrate: PostgreSQL is unavailable, no table was created: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`,
        ),
      );
    } finally {
      await nowhere.end();
    }
  });

  it("migrates again without harm, keeping the records", async () => {
    await store.claim({ id: "kept", fingerprint: "f", owner: "o", leaseMs: 1000 });
    await Promise.all([migrate(pool, { schema }), migrate(pool, { schema })]);
    expect(await store.get("kept")).toMatchObject({ state: "processing" });
  });

  it("ships the SQL migrate() runs as merchant-webhooks/postgres/schema.sql in the build", () => {
    const file = new URL("../../dist/postgres/schema.sql", import.meta.url);
    expect(existsSync(file), "run `npm run build` first").toBe(true);
    expect(readFileSync(file, "utf8")).toContain(postgresSchemaSql());
    expect(postgresSchemaSql({ schema: "billing", table: "inbox" })).toContain(
      'CREATE TABLE IF NOT EXISTS "billing"."inbox"',
    );
  });
});

describe("purge", () => {
  it("deletes settled records past retention and keeps recent ones and claims in progress", async () => {
    for (const id of ["old-done", "old-failed", "new-done", "old-running"])
      await store.claim({ id, fingerprint: "f", owner: `o-${id}`, leaseMs: 60_000 });
    await store.complete({ id: "old-done", owner: "o-old-done" }, answer);
    await store.fail({ id: "old-failed", owner: "o-old-failed" }, "handler_failed");
    await store.complete({ id: "new-done", owner: "o-new-done" }, answer);
    await pool.query(
      `UPDATE "${schema}".merchant_webhooks_inbox SET updated_at = now() - interval '2 days' WHERE id LIKE 'old-%'`,
    );
    const purged = await purge(pool, { schema, olderThanSeconds: 24 * 60 * 60 });
    expect(purged.records).toBe(2);
    const left = await pool.query(`SELECT id FROM "${schema}".merchant_webhooks_inbox WHERE id <> 'kept' ORDER BY id`);
    expect(left.rows.map((row) => row.id)).toEqual(["new-done", "old-running"]);
  });

  it("deletes the fence rows of backends that have ended and keeps a live backend's", async () => {
    const live = await pool.connect();
    try {
      const fence = `"${schema}".merchant_webhooks_inbox_fence`;
      const { rows } = await live.query("SELECT pg_backend_pid() AS pid");
      const livePid = rows[0].pid as number;
      // Written as a claim's sealed commit writes them (the fence's trigger refuses any other commit);
      // 2147483000 is above Linux's highest process id, so no backend has it.
      const sealedInsert = (backend: number, token: string) =>
        pool.query(
          `BEGIN; SELECT set_config('merchant_webhooks.sealed', '${token}', true); INSERT INTO ${fence} (backend, token) VALUES (${backend}, '${token}'); COMMIT`,
        );
      await sealedInsert(2147483000, "ended");
      await sealedInsert(livePid, "live");
      const purged = await purge(pool, { schema });
      expect(purged.fences).toBeGreaterThanOrEqual(1);
      const left = await pool.query(`SELECT backend FROM ${fence} WHERE backend IN (2147483000, $1)`, [livePid]);
      expect(left.rows.map((row) => row.backend)).toEqual([livePid]);
    } finally {
      live.release();
    }
  });
});
