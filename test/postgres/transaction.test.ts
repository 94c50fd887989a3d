import { createReceiver, inProcessQueue, type ReceiverOptions } from "merchant-webhooks";
import { MissingTableError, migrate, postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { messagesDuring } from "../support/pg-messages.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { createSchema010 } from "./fixtures/schema-0.1.0.js";

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

  it("runs with the longest handler time limit a receiver accepts (the server's bound stays in its range)", async () => {
    const receiver = receiverWith({
      handlerTimeoutMs: 2_147_483_647,
      onRenew: async (n, ctx) => void (await insertEffect(ctx, n.id)),
    });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
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

describe("the claim and the completion as functions migrate() installs", () => {
  it("runs a first delivery in three round trips: BEGIN with the claim, the handler's insert, the seal with COMMIT", async () => {
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: pool, schema }),
      logger: silentLogger(),
      onRenew: async (n, ctx) =>
        void (await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id])),
    });
    const body = json(notification());
    await receiver.handle(post(json(notification()))); // the pool's connections are open
    const first = await messagesDuring(async () => expect((await receiver.handle(post(body))).status).toBe(200));
    expect(first).toHaveLength(3);
    // Plain statements prepared on the connection, no PL/pgSQL function on the way.
    expect(first[0]).toMatch(/^BEGIN ISOLATION LEVEL READ COMMITTED; EXECUTE merchant_webhooks_claim_v6_\w+\(/);
    // The claim wrote the record completed: its completion checks and seals, and commits.
    expect(first[2]).toMatch(/^EXECUTE merchant_webhooks_seal_v6_\w+\(.*\); COMMIT$/s);
    // A duplicate: the claim finds the completed record, and the transaction ends.
    const again = await messagesDuring(async () => expect((await receiver.handle(post(body))).status).toBe(200));
    expect(again).toHaveLength(2);
  });

  it("prepares its claim again on a connection whose prepared statements a handler deallocated", async () => {
    // One connection, so every delivery runs on the one whose statements the handler dropped.
    const single = testPool(1);
    const onRenew = vi.fn(async (n: { id: string }, ctx) => {
      await insertEffect(ctx, n.id);
      if (n.id === dropping.id) await ctx.transaction.query("DEALLOCATE ALL");
    });
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: single, schema }),
      logger: silentLogger(),
      onRenew,
    });
    const dropping = notification();
    try {
      expect((await receiver.handle(post(json(notification())))).status).toBe(200);
      // The handler dropped the seal its own claim prepared: its run fails whole, and its retry runs once.
      expect((await receiver.handle(post(json(dropping)))).status).toBe(500);
      expect(await rowsOf(dropping.id)).toBe(0);
      const next = notification();
      expect((await receiver.handle(post(json(next)))).status).toBe(200);
      expect((await receiver.handle(post(json(next)))).status).toBe(200);
      expect(await rowsOf(next.id)).toBe(1);
      const prepared = await single.query("SELECT count(*)::int AS n FROM pg_prepared_statements");
      expect(prepared.rows[0].n).toBe(2);
    } finally {
      await receiver.close();
      await single.end();
    }
  });

  it("keeps the answer a run ends with when it is not the one the claim wrote: no handler for the event type", async () => {
    const store = postgresStore({ connection: pool, schema });
    const receiver = createReceiver({ idempotency: store, logger: silentLogger(), onCancel: vi.fn() });
    const sent = notification();
    const first = await receiver.handle(post(json(sent)));
    expect(first.status).toBe(200);
    const unhandled = { processed: true, message: "no handler for this event type; acknowledged" };
    expect(JSON.parse(String(first.body))).toEqual(unhandled);
    expect(await store.get(sent.id)).toMatchObject({ state: "completed", attempts: 1, answer: unhandled });
    expect((await receiver.handle(post(json(sent)))).status).toBe(200);
  });

  it("on a schema from before them, answers 503 naming migrate(); migrate() installs them and the delivery runs", async () => {
    const old = uniqueSchema("oldschema");
    // The tables as 0.1.0 made them: without the fence, with its functions (v2) only.
    await createSchema010(pool, old, "inbox");
    try {
      const store = postgresStore({ connection: pool, schema: old, table: "inbox" });
      const failure = await Promise.resolve(
        store.claim({ id: "x", fingerprint: "f", owner: "o", leaseMs: 1000 }),
      ).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(MissingTableError);
      expect((failure as Error).message).toContain(`"${old}"."inbox" are at schema version 1 and this release needs 8`);
      expect((failure as Error).message).toContain(`run migrate(pool, { schema: "${old}", table: "inbox" })`);
      const onRenew = vi.fn();
      const receiver = createReceiver({ idempotency: store, logger: silentLogger(), onRenew });
      const body = json(notification());
      expect((await receiver.handle(post(body))).status).toBe(503);
      expect(onRenew).not.toHaveBeenCalled();
      await migrate(pool, { schema: old, table: "inbox" });
      expect((await receiver.handle(post(body))).status).toBe(200);
      expect(onRenew).toHaveBeenCalledTimes(1);
    } finally {
      await dropSchema(pool, old);
    }
  });

  it("lets one of 24 simultaneous deliveries of an id run: one effect, the others 409 or the duplicate's 200", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const onRenew = vi.fn(async (n: { id: string }, ctx) => {
      await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id]);
      await held;
    });
    // Each delivery through its own receiver and store, as from separate processes.
    const receivers = Array.from({ length: 24 }, () =>
      createReceiver({ idempotency: postgresStore({ connection: pool, schema }), logger: silentLogger(), onRenew }),
    );
    const sent = notification();
    const answers = receivers.map((receiver) => receiver.handle(post(json(sent))));
    await vi.waitFor(() => expect(onRenew).toHaveBeenCalled(), { timeout: 10_000 });
    release();
    const statuses = (await Promise.all(answers)).map((answer) => answer.status);
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(statuses.filter((status) => status !== 409 && status !== 200)).toEqual([]);
    expect(await rowsOf(sent.id)).toBe(1);
    expect((await receivers[0]!.handle(post(json(sent)))).status).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("stores ids and answers with quotes and backslashes as they are, whatever standard_conforming_strings says", async () => {
    for (const conforming of ["on", "off"]) {
      const odd = new pg.Pool({ connectionString: pool.options.connectionString, max: 1 });
      odd.on("connect", (client) => void client.query(`SET standard_conforming_strings = ${conforming}`));
      try {
        const store = postgresStore({ connection: odd, schema });
        const id = `it's a \\ back\\slash \\' ${conforming}`;
        const answer = { processed: true, message: `O'Brien said "\\n" \\' and \\\\ ${conforming}` };
        const claim = await store.claimInTransaction({ id, fingerprint: "f'\\", owner: "o'\\", leaseMs: 1000 });
        expect(claim.result).toMatchObject({ status: "claimed", id });
        await claim.commit(answer);
        expect(await store.get(id)).toMatchObject({ state: "completed", fingerprint: "f'\\", answer });
        const again = await store.claimInTransaction({ id, fingerprint: "f'\\", owner: "other", leaseMs: 1000 });
        expect(again.result).toEqual({ status: "completed", answer });
      } finally {
        await odd.end();
      }
    }
  });
});

describe("a notification waiting for a backpressure slot", () => {
  it("keeps its transaction past the server's bound while it waits, and runs with the bound once it starts", async () => {
    // Handlers one at a time, each 400 ms: the last of 8 waits about 2.8 s, longer than the bound (2 s).
    const timeoutSeen: string[] = [];
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: pool, schema, timeoutMs: 1_000 }),
      logger: silentLogger(),
      handlerTimeoutMs: 1_000,
      backpressure: { concurrency: 1 },
      onRenew: async (n, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        await insertEffect(ctx, n.id);
        const { rows } = await ctx.transaction.query("SHOW idle_in_transaction_session_timeout");
        timeoutSeen.push(rows[0].idle_in_transaction_session_timeout);
      },
    });
    const sent = Array.from({ length: 8 }, () => notification());
    const statuses = await Promise.all(sent.map(async (n) => (await receiver.handle(post(json(n)))).status));
    expect(statuses).toEqual(Array(8).fill(200));
    for (const n of sent) expect(await rowsOf(n.id)).toBe(1);
    expect(new Set(timeoutSeen)).toEqual(new Set(["2s"]));
  });
});

describe("a first delivery's record, written whole as its run ends", () => {
  it("is committed as processing when the claim goes to an in-process queue, then completed by the run", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const onRenew = vi.fn(async () => held);
    const receiver = receiverWith({ queue: inProcessQueue({ concurrency: 1 }), onRenew });
    const sent = notification();
    expect((await receiver.handle(post(json(sent)))).status).toBe(200);
    await vi.waitFor(() => expect(onRenew).toHaveBeenCalled());
    expect(await store().get(sent.id)).toMatchObject({ state: "processing", attempts: 1 });
    release();
    await vi.waitFor(async () => expect(await store().get(sent.id)).toMatchObject({ state: "completed" }));
    expect((await receiver.handle(post(json(sent)))).status).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
    await receiver.close();
  });

  it("replaces a record past retention, which counts as gone, and never a live one", async () => {
    const short = () => postgresStore({ connection: pool, schema, retentionSeconds: 60 });
    const onRenew = vi.fn(async (n: { id: string }, ctx) => void (await insertEffect(ctx, n.id)));
    const receiver = createReceiver({ idempotency: short(), logger: silentLogger(), onRenew });
    const sent = notification();
    expect((await receiver.handle(post(json(sent)))).status).toBe(200);
    await pool.query(
      `UPDATE "${schema}".merchant_webhooks_inbox SET updated_at = now() - interval '2 minutes' WHERE id = $1`,
      [sent.id],
    );
    // Past retention, another payload under the id is a new notification: it runs, and its record replaces the old.
    const altered = { ...sent, resource: { ...sent.resource, plan_id: "another-plan" } };
    expect(await receiver.handle(post(json(altered)))).toMatchObject({ status: 200 });
    expect(onRenew).toHaveBeenCalledTimes(2);
    expect(await short().get(sent.id)).toMatchObject({ state: "completed", attempts: 1 });
    // Live again: the first payload is now the other one, 422.
    expect((await receiver.handle(post(json(sent)))).status).toBe(422);
    expect(await rowsOf(sent.id)).toBe(2);
  });
});
