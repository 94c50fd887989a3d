import { createReceiver, type ReceiverOptions } from "merchant-webhooks";
import { createPgBossWorker } from "merchant-webhooks/pg-boss";
import { migrate, ormTransactions, postgresStore } from "merchant-webhooks/postgres";
import { buildNotification } from "merchant-webhooks/testing";
import PgBoss from "pg-boss";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { orderContract } from "../idempotency/order-contract.js";
import { storeContract, transactionFencingContract } from "../idempotency/store-contract.js";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { messagesDuring } from "../support/pg-messages.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { ALL_ORMS, ORMS, type OrmUnderTest } from "./fixtures/orm-adapters.js";
import { receiverTablesSql } from "./fixtures/receiver-tables.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const answerOf = (response: { status: number; body: string }) => ({
  status: response.status,
  ...(JSON.parse(response.body) as { processed: boolean }),
});
const codeOf = (work: Promise<unknown>) =>
  work.then(
    () => "ran",
    (err: { code?: unknown }) => err.code,
  );

describe.each(Object.entries(ALL_ORMS))("postgresStore({ orm }) through %s", (ormName, makeOrm) => {
  const schema = uniqueSchema("orm");
  const pool = testPool();
  let orm: OrmUnderTest;
  let tables = 0;

  beforeAll(async () => {
    await freshSchema(pool, schema, receiverTablesSql(schema));
    orm = await makeOrm(DATABASE_URL, schema);
  });
  afterAll(async () => {
    await orm.close();
    await dropSchema(pool, schema);
    await pool.end();
  });

  const freshStore = async ({ retentionSeconds }: { retentionSeconds?: number }) => {
    const table = `inbox_${++tables}`;
    await migrate(pool, { schema, table });
    return postgresStore({
      connection: pool,
      schema,
      table,
      orm: orm.orm,
      ...(retentionSeconds ? { retentionSeconds } : {}),
    });
  };
  storeContract("postgresStore({ orm })", freshStore);
  orderContract("postgresStore({ orm })", freshStore);
  transactionFencingContract("postgresStore({ orm })", freshStore, {
    statement: "SELECT 1",
    control: ["COMMIT", "rollback", "/* first */ END", "-- first\nBEGIN", "ABORT", "START TRANSACTION"],
    handle: (transaction) => ({
      query: (text) => orm.query({ transaction }, text),
      release: () => {},
    }),
  });

  const store = () => postgresStore({ connection: pool, schema, orm: orm.orm });
  // Every adapter answers the ORM's COMMIT itself (answersEnd) but Kysely's over its own
  // db.transaction(), which sends it.
  const answersOwnEnd = () => ormName in ORMS;
  // The adapters that name their connection, on which the store prepares its statements (Kysely hands out none).
  const prepares = ["knex", "typeorm", "drizzle"].includes(ormName);
  const receiverWith = (handlers: Partial<ReceiverOptions>) =>
    createReceiver({ idempotency: store(), logger: silentLogger(), ...handlers });
  const rowsOf = async (id: string) =>
    Number(
      (await pool.query(`SELECT count(*) FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0].count,
    );

  /** The ORM's connections the server sees inside a transaction (none between deliveries). */
  const inTransaction = async () =>
    Number(
      (
        await pool.query(
          "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'",
          [schema],
        )
      ).rows[0].count,
    );

  it("commits the handler's ORM write with the record, and answers the duplicate from the record without a run", async () => {
    const onRenew = vi.fn(async (n: { id: string }, ctx) => orm.insertEffect(ctx, n.id));
    const receiver = receiverWith({ onRenew });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await store().get(sent.id)).toMatchObject({ state: "completed", attempts: 1 });
    // The duplicate's and the 422's transactions ended too: the ORM's COMMIT passed the gate.
    expect((await receiver.handle(post(json({ ...sent, summary: "another payload" })))).status).toBe(422);
    expect(await inTransaction()).toBe(0);
  });

  it("runs a first delivery in four round trips (the ORM's BEGIN, the claim, the handler's write, the completion with COMMIT), a duplicate in three; five and four where the adapter sends the ORM's COMMIT", async () => {
    const answersEnd = answersOwnEnd();
    const onRenew = vi.fn(async (n: { id: string }, ctx) => orm.insertEffect(ctx, n.id));
    const receiver = receiverWith({ onRenew });
    await receiver.handle(post(json(notification()))); // the ORM's connections are open
    const sent = notification();
    const first = await messagesDuring(async () => expect((await receiver.handle(post(json(sent)))).status).toBe(200));
    expect(first).toHaveLength(answersEnd ? 4 : 5);
    expect(first[0]).toMatch(/^(BEGIN|START TRANSACTION)/i);
    // Plain statements, no PL/pgSQL function on the way: prepared where the adapter names its
    // connection, sent as text where it does not.
    expect(first[1]).toMatch(prepares ? /^EXECUTE merchant_webhooks_claim_v6_\w+\(/ : /^WITH l AS \(/);
    // The claim wrote the record completed: the completion checks and seals.
    expect(first[3]).toMatch(prepares ? /^EXECUTE merchant_webhooks_seal_v6_\w+\(/ : /_refuse_v6"\(/);
    expect(first[3]).toMatch(answersEnd ? /; COMMIT$/ : /^[^;]*$/);
    expect(first.join("\n")).not.toMatch(/_claim_v5"\(|PREPARE/);
    expect(first.join("\n")).not.toMatch(/SET TRANSACTION/);
    const again = await messagesDuring(async () => expect((await receiver.handle(post(json(sent)))).status).toBe(200));
    expect(again).toHaveLength(answersEnd ? 3 : 4);
    expect(onRenew).toHaveBeenCalledTimes(2);
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await store().get(sent.id)).toMatchObject({ state: "completed", attempts: 1 });
    // Every transaction ended on the server, and the ORM's connections serve the next delivery.
    expect(await inTransaction()).toBe(0);
    const next = notification();
    expect((await receiver.handle(post(json(next)))).status).toBe(200);
    expect(await rowsOf(next.id)).toBe(1);
  });

  it("prepares its statements again on a connection whose prepared statements a handler deallocated", async () => {
    const dropping = notification();
    const onRenew = vi.fn(async (n: { id: string }, ctx) => {
      await orm.insertEffect(ctx, n.id);
      if (n.id === dropping.id && ctx.attempt === 1) await orm.query(ctx, "DEALLOCATE ALL");
    });
    const receiver = receiverWith({ onRenew });
    expect((await receiver.handle(post(json(notification())))).status).toBe(200);
    // Where the adapter names its connection, the handler dropped the seal its own claim prepared: the
    // run fails whole, and its retry runs once. Elsewhere nothing was prepared, and it commits.
    expect((await receiver.handle(post(json(dropping)))).status).toBe(prepares ? 500 : 200);
    expect(await rowsOf(dropping.id)).toBe(prepares ? 0 : 1);
    expect((await receiver.handle(post(json(dropping)))).status).toBe(200);
    expect(await rowsOf(dropping.id)).toBe(1);
    // More deliveries, one at a time, than the ORM's pool has connections: the emptied one serves one too.
    const next = Array.from({ length: 12 }, () => notification());
    for (const sent of next) expect((await receiver.handle(post(json(sent)))).status).toBe(200);
    for (const sent of next) expect(await rowsOf(sent.id)).toBe(1);
    expect(onRenew).toHaveBeenCalledTimes(prepares ? 15 : 14);
  });

  it("sets the store's isolation level once it finds the ORM's transaction at another: the claim runs again, set, and the run once", async () => {
    const onRenew = vi.fn(async (n: { id: string }, ctx) => orm.insertEffect(ctx, n.id));
    const serializable = postgresStore({ connection: pool, schema, orm: orm.orm, isolationLevel: "serializable" });
    const receiver = createReceiver({ idempotency: serializable, logger: silentLogger(), onRenew });
    const sent = notification();
    const first = await messagesDuring(async () => expect((await receiver.handle(post(json(sent)))).status).toBe(200));
    // Read committed (the server's default) found by the first claim, which rolled back; then set.
    expect(first.filter((message) => /_claim_v5"\(/.test(message))).toHaveLength(2);
    expect(first.filter((message) => /^SET TRANSACTION ISOLATION LEVEL SERIALIZABLE$/.test(message))).toHaveLength(1);
    const next = notification();
    const second = await messagesDuring(async () => expect((await receiver.handle(post(json(next)))).status).toBe(200));
    expect(second[1]).toBe("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
    expect(second).toHaveLength(answersOwnEnd() ? 5 : 6);
    expect(onRenew).toHaveBeenCalledTimes(2);
    expect([await rowsOf(sent.id), await rowsOf(next.id)]).toEqual([1, 1]);
    expect(await serializable.get(sent.id)).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("keeps nothing of a handler that throws after its ORM write, answers 500 so the sender retries; the retry gives 1 row", async () => {
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await orm.insertEffect(ctx, n.id);
        if (ctx.attempt === 1) throw new Error("ledger refused");
      },
    });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 500, processed: false });
    expect(await rowsOf(sent.id)).toBe(0);
    expect(await store().get(sent.id)).toMatchObject({ state: "failed", attempts: 1, error: "handler_failed" });
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await store().get(sent.id)).toMatchObject({ state: "completed", attempts: 2 });
  });

  it("writes one effect row for 50 concurrent deliveries of one id; the others wait (409) or get the stored 200", async () => {
    const onRenew = vi.fn(async (n: { id: string }, ctx) => orm.insertEffect(ctx, n.id));
    const receiver = receiverWith({ onRenew });
    const sent = notification();
    const answers = await Promise.all(Array.from({ length: 50 }, () => receiver.handle(post(json(sent)))));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    expect(statuses).toContain(200);
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("refuses a statement through the handler's ORM transaction once the run has settled (MW_TRANSACTION_CLOSED)", async () => {
    let late: Promise<unknown> | undefined;
    let settle: () => void = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await orm.insertEffect(ctx, n.id);
        // Not awaited: the write runs after the handler returned, its run settled.
        late = settled.then(() => orm.insertEffect(ctx, `${n.id}-late`));
      },
    });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    settle();
    expect(await codeOf(late!)).toBe("MW_TRANSACTION_CLOSED");
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await rowsOf(`${sent.id}-late`)).toBe(0);
  });

  it("rolls back a handler past its time limit, its statement cancelled; the retry runs once", async () => {
    const receiver = receiverWith({
      handlerTimeoutMs: 300,
      onRenew: async (n, ctx) => {
        await orm.insertEffect(ctx, n.id);
        if (ctx.attempt === 1) await orm.query(ctx, "SELECT pg_sleep(30)");
      },
    });
    const sent = notification();
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 500, processed: false });
    expect(await rowsOf(sent.id)).toBe(0);
    expect(answerOf(await receiver.handle(post(json(sent))))).toMatchObject({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("keeps a subscription's order in the ORM's transaction: the newest applies, an older one goes to onStale", async () => {
    const sub = `SUB-${process.pid}-orm-${Math.random().toString(36).slice(2, 8)}`;
    const at = (minute: number) =>
      buildNotification(
        "SUBSCRIPTION_RENEW",
        { resource: { id: sub, update_time: `2026-03-01T02:0${minute}:00Z` } },
        { random: true },
      );
    const applied: string[] = [];
    const stale: string[] = [];
    const receiver = receiverWith({
      ordering: true,
      onRenew: async (n, ctx) => {
        await orm.insertEffect(ctx, n.id, n.resource.update_time ?? null);
        applied.push(n.resource.update_time!);
      },
      onStale: async (n) => void stale.push(n.resource.update_time!),
    });
    for (const minute of [1, 3, 2]) expect((await receiver.handle(post(json(at(minute))))).status).toBe(200);
    expect(applied).toEqual(["2026-03-01T02:01:00Z", "2026-03-01T02:03:00Z"]);
    expect(stale).toEqual(["2026-03-01T02:02:00Z"]);
  });
});

describe("createPgBossWorker and postgresStore({ orm })", () => {
  it("refuses the store at start, naming why: pg-boss settles its job with its own SQL on a pg client", async () => {
    const pool = testPool(1);
    const orm = ormTransactions(async () => {
      throw new Error("never opened");
    });
    const create = () =>
      createPgBossWorker({
        boss: new PgBoss(DATABASE_URL),
        name: "orm-refused",
        idempotency: postgresStore({ connection: pool, orm }),
        onRenew: async () => {},
      });
    expect(create).toThrow(/without `orm`/);
    expect(create).toThrow(expect.objectContaining({ code: "MW_INVALID_OPTION", option: "idempotency" }));
    await pool.end();
  });
});
