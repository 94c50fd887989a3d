import { createHash } from "node:crypto";
import { createReceiver } from "merchant-webhooks";
import {
  MissingTableError,
  migrate,
  postgresSchemaSql,
  postgresStore,
  purge,
  SchemaTooNewError,
} from "merchant-webhooks/postgres";
import type pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { functionsSql, SCHEMA_VERSION } from "../../src/postgres/migrations.js";
import { qualifiedNames } from "../../src/postgres/names.js";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { dropSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, sleep } from "../support/redis.js";
import { createSchema010 } from "./fixtures/schema-0.1.0.js";
import { createSchemaV4 } from "./fixtures/schema-v4.js";
import { createSchemaV5 } from "./fixtures/schema-v5.js";

const pool = testPool();
const schemas: string[] = [];
const schemaFor = (label: string) => {
  const schema = uniqueSchema(label);
  schemas.push(schema);
  return schema;
};
afterAll(async () => {
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const answer = { processed: true, message: "processed" };

/** Rows as a 0.1.0 store wrote them, one in each state it had, and an ordering key's position. */
async function recordsIn010(schema: string): Promise<void> {
  const inbox = `"${schema}".merchant_webhooks_inbox`;
  await pool.query(`INSERT INTO ${inbox} (id, fingerprint, state, owner, lease_until, attempts, answer, error, order_key, position, holds_key, waiting) VALUES
    ('running', 'f1', 'processing', 'owner-a', clock_timestamp() + interval '1 hour', 1, NULL, NULL, NULL, NULL, false, false),
    ('abandoned', 'f2', 'processing', 'owner-b', clock_timestamp() - interval '1 minute', 1, NULL, NULL, NULL, NULL, false, false),
    ('queued', 'f3', 'queued', NULL, NULL, 0, NULL, NULL, NULL, NULL, false, false),
    ('completed', 'f4', 'completed', NULL, NULL, 1, '{"processed":true,"message":"processed"}', NULL, NULL, NULL, false, false),
    ('failed', 'f5', 'failed', NULL, NULL, 3, NULL, 'handler_failed', NULL, NULL, false, false),
    ('ordered-1', 'f6', 'processing', 'owner-c', clock_timestamp() + interval '1 hour', 1, NULL, NULL, 'sub-1', '0001', true, false),
    ('ordered-2', 'f7', 'queued', NULL, NULL, 0, NULL, NULL, 'sub-1', '0002', false, true)`);
  await pool.query(
    `INSERT INTO ${inbox}_positions (order_key, position, owner, lease_until) VALUES ('sub-1', '0000', 'owner-c', clock_timestamp() + interval '1 hour'), ('sub-2', '0009', NULL, NULL)`,
  );
}

/** Every row, in 0.1.0's columns (later steps add columns of their own, empty on its rows). */
const everyRow = async (schema: string) => ({
  records: (
    await pool.query(
      `SELECT id, order_key, position, holds_key, waiting, fingerprint, state, owner, lease_until, attempts, answer, error, created_at, updated_at FROM "${schema}".merchant_webhooks_inbox ORDER BY id`,
    )
  ).rows,
  positions: (await pool.query(`SELECT * FROM "${schema}".merchant_webhooks_inbox_positions ORDER BY order_key`)).rows,
});

const versionsOf = async (schema: string, table = "merchant_webhooks_inbox") =>
  (await pool.query(`SELECT version, readable_from FROM "${schema}"."${table}_version" ORDER BY version`)).rows;

describe("migrate() from 0.1.0's tables", () => {
  it("keeps every record in every state, readable and usable by this release's store", async () => {
    const schema = schemaFor("from010");
    await createSchema010(pool, schema);
    await recordsIn010(schema);
    const before = await everyRow(schema);

    expect(await migrate(pool, { schema })).toEqual({ from: 1, to: 8, steps: [2, 3, 4, 5, 6, 7, 8] });
    expect(await versionsOf(schema)).toEqual([
      { version: 1, readable_from: 1 },
      { version: 2, readable_from: 1 },
      { version: 3, readable_from: 1 },
      { version: 4, readable_from: 1 },
      { version: 5, readable_from: 1 },
      { version: 6, readable_from: 1 },
      { version: 7, readable_from: 1 },
      { version: 8, readable_from: 1 },
    ]);
    // Nothing lost or changed: every column of every row as 0.1.0 left it, the new ones empty.
    expect(await everyRow(schema)).toEqual(before);
    const added = await pool.query(
      `SELECT count(*)::int AS n FROM "${schema}".merchant_webhooks_inbox WHERE event_type IS NOT NULL OR subscription_id IS NOT NULL`,
    );
    expect(added.rows[0].n).toBe(0);

    const store = postgresStore({ connection: pool, schema });
    expect(await store.get("completed")).toMatchObject({ state: "completed", answer });
    expect(await store.get("failed")).toMatchObject({ state: "failed", error: "handler_failed", attempts: 3 });
    expect(await store.get("queued")).toMatchObject({ state: "queued" });
    expect(await store.get("running")).toMatchObject({ state: "processing" });
    expect(await store.get("ordered-2")).toMatchObject({ state: "queued" });
    const listed = await store.list!({ limit: 50 });
    expect(listed.items.map((record) => record.id).sort()).toEqual(before.records.map((row) => row.id).sort());

    // The store acts on them: a completed id is a duplicate, a live claim holds, an abandoned one is retried.
    expect(await store.claim({ id: "completed", fingerprint: "f4", owner: "new", leaseMs: 5_000 })).toMatchObject({
      status: "completed",
      answer,
    });
    expect(await store.claim({ id: "running", fingerprint: "f1", owner: "new", leaseMs: 5_000 })).toMatchObject({
      status: "processing",
    });
    const retried = await store.claimInTransaction({
      id: "abandoned",
      fingerprint: "f2",
      owner: "new",
      leaseMs: 5_000,
    });
    expect(retried.result).toMatchObject({ status: "claimed" });
    await retried.commit(answer);
    expect(await store.get("abandoned")).toMatchObject({ state: "completed", answer });
  });

  it("runs beside a 0.1.0 receiver, whose open transaction then commits through its own routines", async () => {
    const schema = schemaFor("beside010");
    await createSchema010(pool, schema);
    await pool.query(`CREATE TABLE "${schema}".effects (id text PRIMARY KEY)`);
    // 0.1.0's delivery as it sends it: BEGIN with its claim (v2), the handler's write, then its completion.
    const claimV2 = async (client: pg.PoolClient, id: string) => {
      await client.query("BEGIN");
      const [claimed] = (
        await client.query(
          `SELECT "${schema}".merchant_webhooks_inbox_claim_v2($1, $2, 'f', $3, 30000, 604800, true, NULL) AS look`,
          [`${schema}.merchant_webhooks_inbox:${id}`, id, `owner-${id}`],
        )
      ).rows;
      expect(claimed.look).toMatch(/^w\(/);
      return claimed.look.slice(1) as string;
    };
    const completeV2 = async (client: pg.PoolClient, id: string, row: string) => {
      await client.query(
        `CALL "${schema}".merchant_webhooks_inbox_complete_v2($1, $2, '{"processed":true,"message":"processed"}'::jsonb, $3, NULL, 604800)`,
        [id, `owner-${id}`, row],
      );
      await client.query("COMMIT");
    };
    const old = await pool.connect();
    try {
      const row = await claimV2(old, "in-flight");
      await old.query(`INSERT INTO "${schema}".effects VALUES ('in-flight')`);

      // The deploy's migrate() while that transaction is open: step 2 runs beside it; step 3 (new
      // columns) needs the table's lock for an instant and tries again until the handler is done,
      // never holding the old receivers up for longer than one try meanwhile.
      const migrating = migrate(pool, { schema });
      await sleep(500);
      // Another delivery to the old receiver meanwhile, claimed and completed through its own routines.
      const other = await pool.connect();
      try {
        await completeV2(other, "meanwhile", await claimV2(other, "meanwhile"));
      } finally {
        other.release(true);
      }
      await completeV2(old, "in-flight", row);
      expect(await migrating).toEqual({ from: 1, to: 8, steps: [2, 3, 4, 5, 6, 7, 8] });
    } finally {
      // A failed step leaves no open transaction in the pool's client.
      old.release(true);
    }
    const store = postgresStore({ connection: pool, schema });
    expect(await store.get("in-flight")).toMatchObject({ state: "completed", answer });
    expect(await store.get("meanwhile")).toMatchObject({ state: "completed", answer });
    expect((await pool.query(`SELECT id FROM "${schema}".effects`)).rows).toEqual([{ id: "in-flight" }]);
    expect(await store.claim({ id: "in-flight", fingerprint: "f", owner: "new", leaseMs: 5_000 })).toMatchObject({
      status: "completed",
    });
  });

  it("leaves the same tables, indexes and functions as a fresh migrate(), earlier releases' functions kept for their receivers", async () => {
    const old = schemaFor("old");
    const fresh = schemaFor("fresh");
    await createSchema010(pool, old);
    await migrate(pool, { schema: old });
    await migrate(pool, { schema: fresh });
    const shape = async (schema: string) => ({
      columns: (
        await pool.query(
          "SELECT table_name, column_name, data_type, is_nullable, column_default, collation_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, 2",
          [schema],
        )
      ).rows,
      indexes: (
        await pool.query(
          "SELECT indexname, replace(indexdef, $1, '') AS def FROM pg_indexes WHERE schemaname = $2 ORDER BY 1",
          [schema, schema],
        )
      ).rows,
      routines: (
        await pool.query(
          "SELECT proname FROM pg_proc WHERE pronamespace = $1::regnamespace AND proname !~ '_(claim|complete)_v[23]$' ORDER BY 1",
          [schema],
        )
      ).rows,
    });
    expect(await shape(old)).toEqual(await shape(fresh));
    const kept = await pool.query(
      "SELECT proname FROM pg_proc WHERE pronamespace = $1::regnamespace AND proname ~ '_(claim|complete)_v[23]$'",
      [old],
    );
    expect(kept.rows.map((row) => row.proname).sort()).toEqual([
      "merchant_webhooks_inbox_claim_v2",
      "merchant_webhooks_inbox_complete_v2",
    ]);
  });

  it("run twice at once: one waits for the other's lock, then finds nothing to do", async () => {
    const schema = schemaFor("twice");
    await createSchema010(pool, schema);
    await recordsIn010(schema);
    const before = await everyRow(schema);
    // Hold the schema's migrate lock so that both calls are seen waiting for it.
    const holder = await pool.connect();
    const key = "1836543337, hashtext($1)";
    let runs: Promise<unknown>[] = [];
    try {
      await holder.query(`SELECT pg_advisory_lock(${key})`, [schema]);
      runs = [migrate(pool, { schema }), migrate(pool, { schema })];
      await eventually(
        async () => {
          const waiting = await pool.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = 1836543337 AND objid = hashtext($1)::oid",
            [schema],
          );
          return waiting.rows[0].n === 2;
        },
        20_000,
        "both migrate() calls waiting for the lock",
      );
      expect(await pool.query(`SELECT to_regclass('"${schema}".merchant_webhooks_inbox_version') AS t`)).toMatchObject({
        rows: [{ t: null }],
      });
    } finally {
      await holder.query(`SELECT pg_advisory_unlock(${key})`, [schema]);
      holder.release();
    }
    const results = await Promise.all(runs);
    expect(results).toEqual(
      expect.arrayContaining([
        { from: 1, to: 8, steps: [2, 3, 4, 5, 6, 7, 8] },
        { from: 8, to: 8, steps: [] },
      ]),
    );
    expect(await versionsOf(schema)).toEqual([
      { version: 1, readable_from: 1 },
      { version: 2, readable_from: 1 },
      { version: 3, readable_from: 1 },
      { version: 4, readable_from: 1 },
      { version: 5, readable_from: 1 },
      { version: 6, readable_from: 1 },
      { version: 7, readable_from: 1 },
      { version: 8, readable_from: 1 },
    ]);
    expect(await everyRow(schema)).toEqual(before);
  });

  it("creates an empty schema in one run, every step recorded; postgresSchemaSql() is the same SQL", async () => {
    const schema = schemaFor("empty");
    expect(await migrate(pool, { schema, table: "inbox" })).toEqual({
      from: 0,
      to: 8,
      steps: [1, 2, 3, 4, 5, 6, 7, 8],
    });
    expect(await versionsOf(schema, "inbox")).toEqual([
      { version: 1, readable_from: 1 },
      { version: 2, readable_from: 1 },
      { version: 3, readable_from: 1 },
      { version: 4, readable_from: 1 },
      { version: 5, readable_from: 1 },
      { version: 6, readable_from: 1 },
      { version: 7, readable_from: 1 },
      { version: 8, readable_from: 1 },
    ]);
    expect(await migrate(pool, { schema, table: "inbox" })).toEqual({ from: 8, to: 8, steps: [] });
    // The shipped SQL, run on the same schema again, changes nothing and records nothing twice.
    await pool.query(postgresSchemaSql({ schema, table: "inbox" }));
    expect(await versionsOf(schema, "inbox")).toHaveLength(8);
  });
});

// Each release's frozen schema, and the routines its receivers call, which stay through a deploy.
const releasesBefore = [
  { version: 4, create: createSchemaV4, steps: [5, 6, 7, 8], kept: ["claim_v4", "complete_v4", "claim_v5"] },
  { version: 5, create: createSchemaV5, steps: [6, 7, 8], kept: ["claim_v5", "complete_v5", "seal_v5"] },
];

describe.each(releasesBefore)("migrate() from version $version's tables", ({ version, create, steps, kept }) => {
  it("installs this release's routines in a step of its own: every record kept, the release before's routines left in place", async () => {
    const schema = schemaFor(`fromv${version}`);
    await create(pool, schema);
    await recordsIn010(schema);
    const before = await everyRow(schema);
    const store = postgresStore({ connection: pool, schema });
    // Before migrate(): refused, naming the call that fixes it.
    const refused = await Promise.resolve(
      store.claim({ id: "early", fingerprint: "f", owner: "o", leaseMs: 1_000 }),
    ).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(MissingTableError);
    expect((refused as Error).message).toContain(`are at schema version ${version} and this release needs 8`);

    expect(await migrate(pool, { schema })).toEqual({ from: version, to: 8, steps });
    expect(await everyRow(schema)).toEqual(before);
    // The release before's receivers, still running through a deploy, keep the routines they call.
    const routines = await pool.query<{ proname: string }>(
      "SELECT proname FROM pg_proc WHERE pronamespace = to_regnamespace($1) ORDER BY proname",
      [schema],
    );
    expect(routines.rows.map((row) => row.proname)).toEqual(
      expect.arrayContaining([...kept, "refuse_v6", "complete_v7"].map((name) => `merchant_webhooks_inbox_${name}`)),
    );

    // This release's receiver on them: a new id runs once, then is a duplicate; a record of before is one too.
    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: store, logger: silentLogger(), onRenew });
    try {
      const body = json(notification());
      expect((await receiver.handle(post(body))).status).toBe(200);
      expect((await receiver.handle(post(body))).status).toBe(200);
      expect(onRenew).toHaveBeenCalledTimes(1);
      expect(await store.claim({ id: "completed", fingerprint: "f4", owner: "new", leaseMs: 5_000 })).toMatchObject({
        status: "completed",
        answer,
      });
    } finally {
      await receiver.close();
    }
  });
});

describe("a store on tables at another version", () => {
  it("on 0.1.0's tables answers 503 naming the migrate() call, logs it at start, and runs once migrated", async () => {
    const schema = schemaFor("older");
    await createSchema010(pool, schema, "inbox");
    const store = postgresStore({ connection: pool, schema, table: "inbox" });
    const call = `run migrate(pool, { schema: "${schema}", table: "inbox" }) from merchant-webhooks/postgres`;
    const { logger, lines } = captureLogger();
    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: store, logger, onRenew });
    try {
      await eventually(async () => lines().some((line) => line.msg?.includes(call)), 20_000, "the start-up warning");
      const failure = await Promise.resolve(store.get("anything")).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(MissingTableError);
      expect((failure as Error).message).toBe(
        `the inbox tables "${schema}"."inbox" are at schema version 1 and this release needs 8: ${call}, which brings them to it keeping every record`,
      );
      const body = json(notification());
      expect((await receiver.handle(post(body))).status).toBe(503);
      expect(onRenew).not.toHaveBeenCalled();
      await expect(purge(pool, { schema, table: "inbox" })).rejects.toBeInstanceOf(MissingTableError);
      await migrate(pool, { schema, table: "inbox" });
      expect((await receiver.handle(post(body))).status).toBe(200);
      expect(onRenew).toHaveBeenCalledTimes(1);
    } finally {
      await receiver.close();
    }
  });

  it("on a newer version that no longer serves this release: refused with MW_SCHEMA_TOO_NEW, by the store, migrate() and purge", async () => {
    const schema = schemaFor("newer");
    await migrate(pool, { schema });
    await pool.query(
      `INSERT INTO "${schema}".merchant_webhooks_inbox_version (version, readable_from, description) VALUES (9, 9, 'a later release')`,
    );
    const store = postgresStore({ connection: pool, schema });
    const failure = await Promise.resolve(store.claim({ id: "x", fingerprint: "f", owner: "o", leaseMs: 1_000 })).catch(
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(SchemaTooNewError);
    expect(failure).toMatchObject({ code: "MW_SCHEMA_TOO_NEW" });
    expect((failure as Error).message).toContain(`"${schema}"."merchant_webhooks_inbox" are at schema version 9`);
    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: store, logger: silentLogger(), onRenew });
    try {
      expect((await receiver.handle(post(json(notification())))).status).toBe(503);
      expect(onRenew).not.toHaveBeenCalled();
    } finally {
      await receiver.close();
    }
    await expect(migrate(pool, { schema })).rejects.toMatchObject({ code: "MW_SCHEMA_TOO_NEW" });
    await expect(purge(pool, { schema })).rejects.toMatchObject({ code: "MW_SCHEMA_TOO_NEW" });
    expect(await versionsOf(schema)).toHaveLength(9);
  });

  it("on a newer version that still serves this release (an added column, say): runs as usual", async () => {
    const schema = schemaFor("compatible");
    await migrate(pool, { schema });
    await pool.query(
      `INSERT INTO "${schema}".merchant_webhooks_inbox_version (version, readable_from, description) VALUES (9, 1, 'a later release')`,
    );
    expect(await migrate(pool, { schema })).toEqual({ from: 9, to: 9, steps: [] });
    const onRenew = vi.fn();
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: pool, schema }),
      logger: silentLogger(),
      onRenew,
    });
    try {
      expect((await receiver.handle(post(json(notification())))).status).toBe(200);
      expect(onRenew).toHaveBeenCalledTimes(1);
    } finally {
      await receiver.close();
    }
  });
});

describe("the steps", () => {
  it("install the routines version 8 recorded: a changed routine needs a new name and a step of its own", () => {
    // Databases already at version 8 never run its step again: a routine changed under the same name
    // would reach new databases only. Renamed (_v7) in a new step, it reaches every one.
    const installed = createHash("sha256").update(functionsSql(qualifiedNames())).digest("hex").slice(0, 16);
    expect(SCHEMA_VERSION, "a new step: record its routines' hash here").toBe(8);
    expect(installed, "the routines changed: give them a new name in a new step (src/postgres/migrations.ts)").toBe(
      "8d456a3fc3a1ad2a",
    );
  });
});
