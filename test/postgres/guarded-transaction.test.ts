import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import { pgSchema, serial, text } from "drizzle-orm/pg-core";
import { Kysely, PostgresDialect, type Generated } from "kysely";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReceiver, type ReceiverOptions } from "merchant-webhooks";
import { postgresStore } from "merchant-webhooks/postgres";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually } from "../support/redis.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const statusOf = async (response: Promise<{ status: number; body: string }>) => {
  const { status, body } = await response;
  return { status, processed: (JSON.parse(body) as { processed: boolean }).processed };
};

const schema = uniqueSchema("guard");
const pool = testPool();
const effects = `"${schema}".effects`;
// No unique constraint: a second effect for one notification is a second row.
const effectsTable = pgSchema(schema).table("effects", {
  id: serial("id").primaryKey(),
  notificationId: text("notification_id").notNull(),
});
interface Tables {
  effects: { id: Generated<number>; notification_id: string };
}

beforeAll(async () => {
  await freshSchema(pool, schema, `CREATE TABLE ${effects} (id serial PRIMARY KEY, notification_id text NOT NULL)`);
});
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

const receiverWith = (handlers: Partial<ReceiverOptions>, connection: pg.Pool = pool) =>
  createReceiver({ idempotency: postgresStore({ connection, schema }), logger: silentLogger(), ...handlers });
const rowsOf = async (id: string) =>
  Number((await pool.query(`SELECT count(*) FROM ${effects} WHERE notification_id = $1`, [id])).rows[0].count);
const insert = (client: Pick<pg.PoolClient, "query">, id: string) =>
  client.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [id]);
const codeOf = async (write: Promise<unknown>) =>
  write.then(
    () => "written",
    (err: { code?: string }) => err.code,
  );

describe("ctx.transaction after the run settles", () => {
  it("refuses a write sent after the handler returned (MW_TRANSACTION_CLOSED); only the awaited one commits", async () => {
    let late: Promise<string | undefined> | undefined;
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await insert(ctx.transaction, n.id);
        const handle = ctx.transaction;
        late = new Promise((resolve) => setTimeout(() => resolve(codeOf(insert(handle, n.id))), 50));
      },
    });
    const sent = notification();
    expect(await statusOf(receiver.handle(post(json(sent))))).toEqual({ status: 200, processed: true });
    expect(await late).toBe("MW_TRANSACTION_CLOSED");
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("keeps a failed run's late write out of the next notification's transaction on the same client", async () => {
    // One connection: the second notification's transaction is on the very client the first one used.
    const single = testPool(1);
    let late: Promise<string | undefined> | undefined;
    let lateSent!: () => void;
    const lateWasSent = new Promise<void>((resolve) => (lateSent = resolve));
    const x = notification();
    const y = notification();
    const receiver = receiverWith(
      {
        onRenew: async (n, ctx) => {
          if (n.id === x.id && ctx.attempt === 1) {
            const handle = ctx.transaction;
            setTimeout(() => {
              late = codeOf(insert(handle, x.id));
              lateSent();
            }, 100);
            throw new Error("ledger refused");
          }
          await insert(ctx.transaction, n.id);
          if (n.id === y.id) await lateWasSent; // X's late write is sent while Y's transaction is open
        },
      },
      single,
    );
    expect(await statusOf(receiver.handle(post(json(x))))).toEqual({ status: 500, processed: false });
    expect(await statusOf(receiver.handle(post(json(y))))).toEqual({ status: 200, processed: true });
    expect(await late).toBe("MW_TRANSACTION_CLOSED");
    expect(await rowsOf(x.id)).toBe(0);
    expect(await statusOf(receiver.handle(post(json(x))))).toEqual({ status: 200, processed: true });
    expect(await rowsOf(x.id)).toBe(1);
    expect(await rowsOf(y.id)).toBe(1);
    await single.end();
  });

  it("ignores release() from the handler: the record still commits with the effect, and the client is reused", async () => {
    const single = testPool(1);
    const receiver = receiverWith(
      {
        onRenew: async (n, ctx) => {
          ctx.transaction.release();
          await insert(ctx.transaction, n.id);
          ctx.transaction.release(new Error("a query builder's cleanup"));
        },
      },
      single,
    );
    const sent = [notification(), notification(), notification()];
    for (const n of sent)
      expect(await statusOf(receiver.handle(post(json(n))))).toEqual({ status: 200, processed: true });
    for (const n of sent) expect(await rowsOf(n.id)).toBe(1);
    expect(single.totalCount).toBe(1);
    await single.end();
  });
});

describe("transaction control through ctx.transaction", () => {
  const refused = [
    "COMMIT",
    "commit",
    "  \n\tCoMmIt WORK",
    "END",
    "end transaction",
    "ABORT",
    "BEGIN",
    "begin isolation level serializable",
    "START TRANSACTION",
    "ROLLBACK",
    "rollback and chain",
    "ROLLBACK PREPARED 'x'",
    "COMMIT PREPARED 'x'",
    "PREPARE TRANSACTION 'x'",
    "-- a comment first\nCOMMIT",
    "/* a comment */ COMMIT",
    "/* nested /* comments */ still a comment */ROLLBACK",
    ";; COMMIT",
    "/**/commit/**/",
  ];

  it("refuses every statement that would end or restart the transaction (MW_TRANSACTION_CONTROL); the run still commits once", async () => {
    const codes: Array<string | undefined> = [];
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await insert(ctx.transaction, n.id);
        for (const statement of refused) codes.push(await codeOf(ctx.transaction.query(statement)));
        // The refusal is the handle's, not the server's: the transaction is not aborted, and still open.
        const { rows } = await ctx.transaction.query<{ open: boolean }>("SELECT now() = statement_timestamp() AS open");
        codes.push(rows[0]!.open ? "autocommit" : "in the transaction");
      },
    });
    const sent = notification();
    expect(await statusOf(receiver.handle(post(json(sent))))).toEqual({ status: 200, processed: true });
    expect(codes).toEqual([...refused.map(() => "MW_TRANSACTION_CONTROL"), "in the transaction"]);
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("never runs a second statement hidden behind a first one: the server takes one statement per query", async () => {
    let code: string | undefined;
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await insert(ctx.transaction, n.id);
        code = await codeOf(ctx.transaction.query("SELECT 1; COMMIT"));
      },
    });
    const sent = notification();
    // The refused string aborted the transaction: nothing is kept, and the retry runs it again.
    expect(await statusOf(receiver.handle(post(json(sent))))).toEqual({ status: 500, processed: false });
    expect(code).toBe("42601");
    expect(await rowsOf(sent.id)).toBe(0);
  });

  it("checks the text it sends: a getter changing its answer, a String object, the callback form", async () => {
    const codes: Array<string | undefined> = [];
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        await insert(ctx.transaction, n.id);
        let reads = 0;
        const shifty = {
          get text() {
            reads += 1;
            return reads === 1 ? "COMMIT" : "SELECT 1";
          },
        };
        codes.push(await codeOf(ctx.transaction.query(shifty as never)));
        const sneaky = {
          get text() {
            reads += 1;
            return reads <= 2 ? "SELECT 1" : "COMMIT";
          },
        };
        codes.push(await codeOf(ctx.transaction.query(sneaky as never)));
        codes.push(await codeOf(ctx.transaction.query({ text: new String("COMMIT") } as never)));
        codes.push(
          await new Promise<string | undefined>((resolve) =>
            ctx.transaction.query("ROLLBACK", (err: (Error & { code?: string }) | null) => resolve(err?.code ?? "ran")),
          ),
        );
      },
    });
    const sent = notification();
    expect(await statusOf(receiver.handle(post(json(sent))))).toEqual({ status: 200, processed: true });
    // The first was refused as what it read; the second ran as what it read (SELECT 1), once.
    expect(codes).toEqual(["MW_TRANSACTION_CONTROL", "written", "MW_TRANSACTION_CONTROL", "MW_TRANSACTION_CONTROL"]);
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("allows SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT to undo a part of the handler's writes", async () => {
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        const tx = ctx.transaction;
        await insert(tx, n.id);
        await tx.query("SAVEPOINT optional_part");
        await insert(tx, n.id);
        await tx.query("ROLLBACK TO SAVEPOINT optional_part");
        await tx.query("savepoint again");
        await insert(tx, n.id);
        await tx.query("/* undo */ rollback transaction to again");
        await tx.query("RELEASE SAVEPOINT optional_part");
      },
    });
    const sent = notification();
    expect(await statusOf(receiver.handle(post(json(sent))))).toEqual({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
  });
});

describe("query builders over ctx.transaction", () => {
  it("drizzle(ctx.transaction): writes commit with the record, a failure rolls them back", async () => {
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        const tx = drizzle(ctx.transaction);
        await tx.insert(effectsTable).values({ notificationId: n.id });
        const mine = await tx.select().from(effectsTable).where(eq(effectsTable.notificationId, n.id));
        if (mine.length !== 1) throw new Error(`saw ${mine.length} rows`);
        if (ctx.attempt === 1) throw new Error("fails once, after its write");
      },
    });
    const sent = notification();
    expect(await statusOf(receiver.handle(post(json(sent))))).toEqual({ status: 500, processed: false });
    expect(await rowsOf(sent.id)).toBe(0);
    expect(await statusOf(receiver.handle(post(json(sent))))).toEqual({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("Kysely over a one-client pool handing out ctx.transaction: every delivery 200, one row each", async () => {
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        const tx = new Kysely<Tables>({
          dialect: new PostgresDialect({
            pool: { connect: async () => ctx.transaction, end: async () => {}, options: {} },
          }),
        });
        // Kysely releases its connection after each query; the guarded handle ignores it.
        await tx.withSchema(schema).insertInto("effects").values({ notification_id: n.id }).execute();
        const mine = await tx
          .withSchema(schema)
          .selectFrom("effects")
          .selectAll()
          .where("notification_id", "=", n.id)
          .execute();
        if (mine.length !== 1) throw new Error(`saw ${mine.length} rows`);
        if (ctx.attempt === 1 && n.id.endsWith("0")) throw new Error("fails once");
      },
    });
    const sent = Array.from({ length: 10 }, (_, i) => notification("SUBSCRIPTION_RENEW", `kysely-${Date.now()}-${i}`));
    for (const n of sent) {
      const first = await statusOf(receiver.handle(post(json(n))));
      if (n.id.endsWith("0")) {
        expect(first).toEqual({ status: 500, processed: false });
        expect(await rowsOf(n.id)).toBe(0);
        expect(await statusOf(receiver.handle(post(json(n))))).toEqual({ status: 200, processed: true });
      } else expect(first).toEqual({ status: 200, processed: true });
    }
    for (const n of sent) expect(await rowsOf(n.id)).toBe(1);
    await eventually(async () => pool.idleCount === pool.totalCount, 5_000, "every client back in the pool");
  });
});
