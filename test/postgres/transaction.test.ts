import { createReceiver, type ReceiverOptions } from "merchant-webhooks";
import { MissingTableError, postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually } from "../support/redis.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const answerOf = (response: { status: number; body: string }) => ({
  status: response.status,
  ...(JSON.parse(response.body) as { processed: boolean; message: string }),
});

const schema = uniqueSchema("tx");
const pool = testPool();
const effects = `"${schema}".effects`;

beforeAll(async () => {
  await freshSchema(pool, schema, `CREATE TABLE ${effects} (id serial PRIMARY KEY, notification_id text NOT NULL)`);
});
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const store = () => postgresStore({ connection: pool, schema });
const receiverWith = (handlers: Partial<ReceiverOptions>) =>
  createReceiver({ idempotency: store(), logger: silentLogger(), ...handlers });
const rowsOf = async (id: string) =>
  Number((await pool.query(`SELECT count(*) FROM ${effects} WHERE notification_id = $1`, [id])).rows[0].count);
const insertEffect = (ctx: { transaction: pg.PoolClient }, id: string) =>
  ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [id]);

describe("postgresStore: the record commits in the handler's transaction", () => {
  it("commits the handler's write with the record, and answers the duplicate from the record without a run", async () => {
    const onRenew = vi.fn(async (n: { id: string }, ctx) => void (await insertEffect(ctx, n.id)));
    const receiver = receiverWith({ onRenew });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await store().get(sent.id)).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("rolls back a handler that inserts and then throws (0 rows, 500); the retry gives 1 row", async () => {
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await insertEffect(ctx, n.id);
        if (ctx.attempt === 1) throw new Error("ledger refused");
      },
    });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 500, processed: false });
    expect(await rowsOf(sent.id)).toBe(0);
    // The failed attempt is recorded outside the rolled-back transaction, without the error's text.
    expect(await store().get(sent.id)).toMatchObject({ state: "failed", attempts: 1, error: "handler_failed" });
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await store().get(sent.id)).toMatchObject({ state: "completed", attempts: 2 });
  });

  it("rolls back a handler that runs past its time limit, and answers 500", async () => {
    const receiver = receiverWith({
      handlerTimeoutMs: 200,
      onRenew: async (n, ctx) => {
        await insertEffect(ctx, n.id);
        await ctx.transaction.query("SELECT pg_sleep(2)");
      },
    });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 500, processed: false });
    expect(await rowsOf(sent.id)).toBe(0);
  });

  it("answers a duplicate 409 at once while the first delivery's transaction is open", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const onRenew = vi.fn(async (n: { id: string }, ctx) => {
      await insertEffect(ctx, n.id);
      started();
      await held;
    });
    const receiver = receiverWith({ onRenew });
    const body = json(notification());
    const first = receiver.handle(post(body));
    await running;
    expect(answerOf(await receiver.handle(post(body)))).toMatchObject({ status: 409, processed: false });
    release();
    expect(answerOf(await first)).toMatchObject({ status: 200 });
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("answers 422 to a different payload under a completed id", async () => {
    const receiver = receiverWith({ onRenew: async (n, ctx) => void (await insertEffect(ctx, n.id)) });
    const sent = notification();
    await receiver.handle(post(json(sent)));
    const altered = { ...sent, resource: { ...sent.resource, plan_id: "another-plan" } };
    expect(answerOf(await receiver.handle(post(json(altered))))).toMatchObject({ status: 422, processed: false });
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("answers 503 and runs nothing when the database cannot be reached", async () => {
    const closed = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/test", max: 1 });
    const onRenew = vi.fn();
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: closed, timeoutMs: 1_000 }),
      logger: silentLogger(),
      onRenew,
    });
    expect(answerOf(await receiver.handle(post(json(notification())))).status).toBe(503);
    expect(onRenew).not.toHaveBeenCalled();
    await closed.end();
  });

  it("reports health with the database's address, and warns at start when the database is away", async () => {
    const receiver = receiverWith({});
    expect(await receiver.health()).toEqual({
      ok: true,
      store: "up",
      queue: "none",
      inFlight: 0,
      maxInFlight: 1000,
      storeAddress: "127.0.0.1:5432",
    });
    const closed = new pg.Pool({ connectionString: "postgres://postgres:secret@127.0.0.1:1/test", max: 1 });
    const { logger, lines } = captureLogger();
    const away = createReceiver({ idempotency: postgresStore({ connection: closed, timeoutMs: 1_000 }), logger });
    await eventually(async () => lines().some((line) => /unreachable at start/.test(line.msg)), 10_000, "the warning");
    expect(await away.health()).toMatchObject({ ok: false, store: "down", storeAddress: "127.0.0.1:1" });
    expect(JSON.stringify(lines())).not.toContain("secret");
    await away.close();
    await closed.end();
  });

  it("names migrate() when the tables are missing, and answers 503 rather than creating them", async () => {
    const missing = postgresStore({ connection: pool, schema, table: "never_migrated" });
    await expect(missing.claim({ id: "x", fingerprint: "f", owner: "o", leaseMs: 1000 })).rejects.toThrow(
      MissingTableError,
    );
    await expect(missing.ping!()).rejects.toThrow(/migrate\(pool, \{ schema: "mw_.*", table: "never_migrated" \}\)/);
    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: missing, logger: silentLogger(), onRenew });
    expect((await receiver.handle(post(json(notification())))).status).toBe(503);
    expect(onRenew).not.toHaveBeenCalled();
    const tables = await pool.query("SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'never_migrated'", [
      schema,
    ]);
    expect(tables.rowCount).toBe(0);
  });

  it("refuses an unknown option with the name it was likely meant to be, and a table name that is not plain", () => {
    expect(() => postgresStore({ connection: pool, tabel: "x" } as never)).toThrow(
      /unknown option "tabel". Did you mean "table"\?/,
    );
    expect(() => postgresStore({ connection: pool, table: 'x"; drop table y; --' })).toThrow(/not a plain identifier/);
  });
});
