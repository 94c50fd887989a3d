import { createReceiver, type ReceiverOptions } from "merchant-webhooks";
import { postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { OLDEST_PG, oldestPg } from "../support/oldest-pg.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { BYPASSES, type Bypass, type BypassForm, bypass } from "./fixtures/fence-bypasses.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const answerOf = async (response: Promise<{ status: number; body: string }>) => {
  const { status, body } = await response;
  return { status, processed: (JSON.parse(body) as { processed: boolean }).processed };
};
const forms = Object.keys(BYPASSES) as BypassForm[];
const rowsIn = (pool: pg.Pool, table: string, id: string) =>
  pool
    .query(`SELECT count(*)::int AS n FROM ${table} WHERE notification_id = $1`, [id])
    .then(({ rows }) => rows[0].n as number);

describe.each([
  { version: "the project's pg", load: async () => pg, forms },
  // pg 8.11 throws (uncaught) on a reply to a query it did not send: the raw connection is no way there.
  {
    version: `pg ${OLDEST_PG}, the oldest in the peer range (no queryMode)`,
    load: oldestPg,
    forms: forms.filter((form) => form !== "the raw connection"),
  },
])("the fence around ctx.transaction, kept by PostgreSQL, on $version", ({ load, forms }) => {
  const schema = uniqueSchema("fencedb");
  const admin = testPool();
  let pool: pg.Pool;
  const effects = `"${schema}".effects`;
  beforeAll(async () => {
    const driver = await load();
    pool = new driver.Pool({ connectionString: DATABASE_URL, max: 5 });
    pool.on("error", () => {});
    await freshSchema(admin, schema, `CREATE TABLE ${effects} (id serial PRIMARY KEY, notification_id text NOT NULL)`);
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    await dropSchema(admin, schema);
    await admin.end();
  });
  const rowsOf = (id: string) => rowsIn(admin, effects, id);
  const receiverWith = (options: Partial<ReceiverOptions>) =>
    createReceiver({ idempotency: postgresStore({ connection: pool, schema }), logger: silentLogger(), ...options });
  const insert = (tx: Pick<pg.PoolClient, "query">, id: string) =>
    tx.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [id]);

  for (const end of ["COMMIT", "ROLLBACK"] as const) {
    it(`${end} past the guard (${forms.join(", ")}): the effect never kept before the run ends, nor gone under a 200`, async () => {
      const sent = new Map(forms.map((form) => [notification().id, `${form}|${end}` as Bypass]));
      const errors: Record<string, string | undefined> = {};
      const keptEarly: string[] = [];
      const receiver = receiverWith({
        onRenew: async (n, ctx) => {
          await insert(ctx.transaction, n.id);
          const which = sent.get(n.id)!;
          if (ctx.attempt > 1) return;
          await bypass(ctx.transaction, which, await load()).catch((err: { code?: string }) => {
            errors[which] = err.code;
          });
          // Seen from another connection while the handler still runs: committed already?
          if ((await rowsOf(n.id)) > 0) keptEarly.push(which);
        },
      });
      const firsts: Record<string, unknown> = {};
      const finals: Record<string, unknown> = {};
      for (const [id, which] of sent) {
        const body = json({ ...notification(), id });
        const first = await answerOf(receiver.handle(post(body)));
        // Right after the first answer: the effect is kept exactly when the answer says so.
        firsts[which] = { ...first, rows: await rowsOf(id) };
        const final = await answerOf(receiver.handle(post(body)));
        finals[which] = { ...final, rows: await rowsOf(id) };
      }
      expect(keptEarly).toEqual([]);
      for (const which of sent.values()) {
        // Refused by the guard (the transaction goes on) or by the database (the run fails, nothing kept).
        const { status, rows } = firsts[which] as { status: number; rows: number };
        expect({ which, status, rows }).toEqual({ which, status, rows: status === 200 ? 1 : 0 });
        expect({ which, ...(finals[which] as object) }).toEqual({ which, status: 200, processed: true, rows: 1 });
      }
      // The database refused each COMMIT it was sent as one (the raw connection's error goes to no query).
      if (end === "COMMIT") expect(errors["a pg.Query whose text changes|COMMIT"]).toBe("25M01");
      await receiver.close();
    }, 60_000);
  }

  it("ends the run at once when a statement fails outside a savepoint: ctx.signal aborts with MW_TRANSACTION_LOST", async () => {
    let reason: { code?: string } | undefined;
    const receiver = receiverWith({
      handlerTimeoutMs: 20_000,
      onRenew: async (n, ctx) => {
        await insert(ctx.transaction, n.id);
        if (ctx.attempt > 1) return;
        await ctx.transaction.query("SELECT 1 / 0").catch(() => {});
        // The handler goes on after the failure; only the run's end stops it.
        if (!ctx.signal.aborted) await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        reason = ctx.signal.reason;
        await new Promise(() => {});
      },
    });
    const sent = notification();
    expect(await answerOf(receiver.handle(post(json(sent))))).toEqual({ status: 500, processed: false });
    expect(reason?.code).toBe("MW_TRANSACTION_LOST");
    expect(await rowsOf(sent.id)).toBe(0);
    expect(await answerOf(receiver.handle(post(json(sent))))).toEqual({ status: 200, processed: true });
    expect(await rowsOf(sent.id)).toBe(1);
    await receiver.close();
  });

  it("keeps the run going after a statement fails inside a savepoint rolled back to", async () => {
    let aborted = false;
    const receiver = receiverWith({
      onRenew: async (n, ctx) => {
        const tx = ctx.transaction;
        await insert(tx, n.id);
        await tx.query("SAVEPOINT optional_part");
        await tx.query("SAVEPOINT nested");
        await tx.query("RELEASE SAVEPOINT nested");
        const failed = await tx.query("SELECT 1 / 0").then(
          () => false,
          () => true,
        );
        await tx.query("ROLLBACK TO SAVEPOINT optional_part");
        await insert(tx, n.id);
        aborted = ctx.signal.aborted || !failed;
      },
    });
    const sent = notification();
    expect(await answerOf(receiver.handle(post(json(sent))))).toEqual({ status: 200, processed: true });
    expect(aborted).toBe(false);
    expect(await rowsOf(sent.id)).toBe(2);
    await receiver.close();
  });
});
