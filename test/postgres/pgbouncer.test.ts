import { createReceiver, type ReceiverOptions } from "merchant-webhooks";
import { migrate, postgresStore } from "merchant-webhooks/postgres";
import { buildNotification } from "merchant-webhooks/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { orderContract } from "../idempotency/order-contract.js";
import { storeContract, transactionFencingContract } from "../idempotency/store-contract.js";
import { silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted, json, notification, post } from "../support/notifications.js";
import { messagesDuring } from "../support/pg-messages.js";
import { type PrivateBouncer, startPgbouncer } from "../support/pgbouncer.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { bypass } from "./fixtures/fence-bypasses.js";

// Behind a transaction-pooling PgBouncer: more clients (8) than server connections (2), so a client's
// consecutive transactions run on different server connections, and each server connection serves
// many clients. The tables are migrated directly (migrate() holds a session lock: see docs/postgres.md).
const schema = uniqueSchema("pgbouncer");
const direct = testPool(3);
const effects = `"${schema}".effects`;
let bouncer: PrivateBouncer;
let pool: pg.Pool;

beforeAll(async () => {
  bouncer = await startPgbouncer({ poolSize: 2 });
  pool = new pg.Pool({ connectionString: bouncer.url, max: 8 });
  pool.on("error", () => {});
  await freshSchema(
    direct,
    schema,
    `CREATE TABLE ${effects} (seq serial PRIMARY KEY, notification_id text NOT NULL, position text);
     CREATE TABLE "${schema}".stale (notification_id text NOT NULL)`,
  );
});
afterAll(async () => {
  await pool?.end();
  await bouncer?.stop();
  await dropSchema(direct, schema);
  await direct.end();
});

const store = () => postgresStore({ connection: pool, schema });
const receiverWith = (handlers: Partial<ReceiverOptions>) =>
  createReceiver({ idempotency: store(), logger: silentLogger(), ...handlers });
const rowsOf = async (id: string) =>
  Number((await direct.query(`SELECT count(*) FROM ${effects} WHERE notification_id = $1`, [id])).rows[0].count);
const insertEffect = (ctx: { transaction: pg.PoolClient }, id: string) =>
  ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [id]);
const statusOf = async (response: Promise<{ status: number }>) => (await response).status;

describe("postgresStore behind PgBouncer in transaction mode", () => {
  it("runs every first delivery once and answers its duplicate from the record, transactions hopping between server connections", async () => {
    const onRenew = vi.fn(async (n: { id: string }, ctx) => void (await insertEffect(ctx, n.id)));
    const receiver = receiverWith({ onRenew });
    const sent = Array.from({ length: 40 }, () => notification());
    // Eight at a time on eight clients over two server connections, then each again.
    for (let at = 0; at < sent.length; at += 8) {
      const batch = sent.slice(at, at + 8).map((n) => statusOf(receiver.handle(post(n))));
      expect(await Promise.all(batch)).toEqual(Array(batch.length).fill(200));
    }
    for (const n of sent) expect(await statusOf(receiver.handle(post(n)))).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(sent.length);
    const counts = await Promise.all(sent.map((n) => rowsOf(n.id)));
    expect(counts).toEqual(Array(sent.length).fill(1));
    expect(await store().get(sent[0]!.id)).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("keeps answering while the pooler replaces its server connections, which hold no statement of this store", async () => {
    // Server connections live a second: new ones, and clients that never ran on them, keep coming.
    const churning = await startPgbouncer({ poolSize: 2, serverLifetimeSeconds: 1 });
    const churned = new pg.Pool({ connectionString: churning.url, max: 8 });
    churned.on("error", () => {});
    try {
      const onRenew = vi.fn(async (n: { id: string }, ctx) => void (await insertEffect(ctx, n.id)));
      const receiver = createReceiver({
        idempotency: postgresStore({ connection: churned, schema }),
        logger: silentLogger(),
        onRenew,
      });
      const sent = Array.from({ length: 200 }, () => notification());
      const statuses: number[] = [];
      for (let at = 0; at < sent.length; at += 8) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        statuses.push(...(await Promise.all(sent.slice(at, at + 8).map((n) => statusOf(receiver.handle(post(n)))))));
      }
      expect(statuses).toEqual(Array(sent.length).fill(200));
      expect(onRenew).toHaveBeenCalledTimes(sent.length);
    } finally {
      await churned.end();
      await churning.stop();
    }
  });

  it("with preparedStatements: false, prepares nothing: the claim and the seal go as text", async () => {
    const onRenew = vi.fn(async (n: { id: string }, ctx) => void (await insertEffect(ctx, n.id)));
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: pool, schema, preparedStatements: false }),
      logger: silentLogger(),
      onRenew,
    });
    await receiver.handle(post(notification())); // the store's version read once
    const sent = notification();
    const first = await messagesDuring(async () => expect(await statusOf(receiver.handle(post(sent)))).toBe(200));
    const again = await messagesDuring(async () => expect(await statusOf(receiver.handle(post(sent)))).toBe(200));
    // Three round trips for a first delivery and two for a duplicate, as prepared.
    expect(first).toHaveLength(3);
    expect(again).toHaveLength(2);
    for (const message of [...first, ...again]) expect(message).not.toMatch(/\b(PREPARE|EXECUTE)\b/);
    expect(onRenew).toHaveBeenCalledTimes(2);
    expect(await rowsOf(sent.id)).toBe(1);
    expect(() => postgresStore({ connection: pool, schema, preparedStatements: "no" as never })).toThrow(
      expect.objectContaining({ code: "MW_INVALID_OPTION" }),
    );
  });

  it("writes one effect row for 50 concurrent deliveries of one id", async () => {
    const onRenew = vi.fn(async (n: { id: string }, ctx) => {
      await insertEffect(ctx, n.id);
      await ctx.transaction.query("SELECT pg_sleep(0.05)");
    });
    const receiver = receiverWith({ onRenew });
    const sent = notification();
    const body = json(sent);
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () =>
        statusOf(receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body })),
      ),
    );
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    expect(onRenew).toHaveBeenCalledTimes(1);
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("rolls back a handler that inserts and then throws; the retry gives one row", async () => {
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await insertEffect(ctx, n.id);
        if (ctx.attempt === 1) throw new Error("ledger refused");
      },
    });
    const sent = notification();
    expect(await statusOf(receiver.handle(post(sent)))).toBe(500);
    expect(await rowsOf(sent.id)).toBe(0);
    expect(await store().get(sent.id)).toMatchObject({ state: "failed", attempts: 1 });
    expect(await statusOf(receiver.handle(post(sent)))).toBe(200);
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await store().get(sent.id)).toMatchObject({ state: "completed", attempts: 2 });
  });

  it("rolls back a handler past its time limit, its statement cancelled on its own server connection", async () => {
    // The pooler's server connections are both busy with a sleeping handler each unless the cancel reaches them.
    const receiver = receiverWith({
      handlerTimeoutMs: 300,
      onRenew: async (n, ctx) => {
        await insertEffect(ctx, n.id);
        await ctx.transaction.query("SELECT pg_sleep(20)");
      },
    });
    const sent = [notification(), notification()];
    const started = Date.now();
    expect(await Promise.all(sent.map((n) => statusOf(receiver.handle(post(n)))))).toEqual([500, 500]);
    expect(await rowsOf(sent[0]!.id)).toBe(0);
    // Answered soon after the limit, the server connections free again: not after the store's 5 s
    // statement limit, at which a rollback stuck behind the sleep gives up and drops its connection.
    await pool.query("SELECT 1");
    expect(Date.now() - started).toBeLessThan(3_000);
    const sleeping = await direct.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(20)' AND state = 'active'",
    );
    expect(sleeping.rows[0].n).toBe(0);
  });

  it("applies one lane's deliveries in position order and loses none", async () => {
    const sub = `SUB-${process.pid}-bouncer`;
    const times = Array.from({ length: 12 }, (_, i) => `2026-03-01T03:${String(i).padStart(2, "0")}:00Z`);
    const sent = times.map((time) =>
      buildNotification("SUBSCRIPTION_RENEW", { resource: { id: sub, update_time: time } }, { random: true }),
    );
    const receiver = receiverWith({
      ordering: true,
      onRenew: async (n, ctx) => {
        await ctx.transaction.query(`INSERT INTO ${effects} (notification_id, position) VALUES ($1, $2)`, [
          n.id,
          n.resource.update_time,
        ]);
      },
      onStale: async (n, ctx) => {
        await ctx.transaction.query(`INSERT INTO "${schema}".stale (notification_id) VALUES ($1)`, [n.id]);
      },
    });
    const order = [...sent].reverse();
    for (let at = 0; at < order.length; at += 4)
      await Promise.all(order.slice(at, at + 4).map((n) => deliverUntilAccepted(receiver, n, 10)));
    const ids = sent.map((n) => n.id);
    const applied = (
      await direct.query(
        `SELECT notification_id, position FROM ${effects} WHERE notification_id = ANY($1) ORDER BY seq`,
        [ids],
      )
    ).rows;
    const stale = (
      await direct.query(`SELECT notification_id FROM "${schema}".stale WHERE notification_id = ANY($1)`, [ids])
    ).rows;
    const positions = applied.map((row) => Date.parse(row.position));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect([...applied, ...stale].map((row) => row.notification_id).sort()).toEqual([...ids].sort());
    expect(applied.at(-1)!.notification_id).toBe(sent.at(-1)!.id);
  });

  it("refuses a statement on ctx.transaction after the run settles, and the handler's own COMMIT", async () => {
    let kept: pg.PoolClient | undefined;
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        kept = ctx.transaction;
        await insertEffect(ctx, n.id);
      },
    });
    const sent = notification();
    expect(await statusOf(receiver.handle(post(sent)))).toBe(200);
    await expect(kept!.query("SELECT 1")).rejects.toMatchObject({ code: "MW_TRANSACTION_CLOSED" });

    const committing = receiverWith({
      onRenew: async (n, ctx) => {
        await insertEffect(ctx, n.id);
        // Past the guard: the fence in the database refuses the commit, whichever server connection it runs on.
        await bypass(ctx.transaction, "several statements|COMMIT", pg).catch(() => {});
      },
    });
    const other = notification();
    expect(await statusOf(committing.handle(post(other)))).not.toBe(200);
    expect(await rowsOf(other.id)).toBe(0);
  });
});

describe("migrate() behind PgBouncer in transaction mode", () => {
  it("refuses at once, naming the fix, and leaves no lock held on the pooler's server connections", async () => {
    // Other clients' transactions keep both server connections busy in turn, as in a deployment.
    let busy = true;
    const others = Array.from({ length: 3 }, async () => {
      while (busy) await pool.query("SELECT pg_sleep(0.005)").catch(() => {});
    });
    try {
      for (let run = 0; run < 3; run++)
        await expect(migrate(pool, { schema, table: "bounced_inbox" })).rejects.toMatchObject({
          code: "MW_MIGRATE_NEEDS_SESSION",
          message: expect.stringContaining("direct connection"),
        });
    } finally {
      busy = false;
      await Promise.all(others);
    }
    const held = await direct.query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1",
      [0x6d776d69],
    );
    expect(held.rows[0].n).toBe(0);
    // Direct, it runs.
    expect(await migrate(direct, { schema, table: "bounced_inbox" })).toMatchObject({ from: 0 });
  });
});

// The store contract through the pooler, each test on a table of its own.
let tables = 0;
const bouncedStore = async ({ retentionSeconds }: { retentionSeconds?: number }) => {
  const table = `inbox_${++tables}`;
  await migrate(direct, { schema, table });
  return postgresStore({ connection: pool, schema, table, ...(retentionSeconds ? { retentionSeconds } : {}) });
};
storeContract("postgresStore behind PgBouncer", bouncedStore);
orderContract("postgresStore behind PgBouncer", bouncedStore);
transactionFencingContract("postgresStore behind PgBouncer", bouncedStore, {
  statement: "SELECT 1",
  control: ["COMMIT", "rollback", "ABORT", "START TRANSACTION"],
});
