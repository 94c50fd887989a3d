import { createReceiver, type ReceiverOptions } from "merchant-webhooks";
import { migrate, type PostgresStoreOptions, postgresStore } from "merchant-webhooks/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, sleep } from "../support/redis.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const schema = uniqueSchema("limits");
const pool = testPool();
const effects = `"${schema}".effects`;

beforeAll(async () => {
  await freshSchema(
    pool,
    schema,
    // No unique constraint: a second effect of one notification is a second row.
    `CREATE TABLE ${effects} (id serial PRIMARY KEY, notification_id text NOT NULL);
     CREATE TABLE "${schema}".counters (id int PRIMARY KEY, n int NOT NULL);
     INSERT INTO "${schema}".counters VALUES (1, 0)`,
  );
});
afterAll(async () => {
  await dropSchema(pool, schema);
  await pool.end();
});

/** A pool whose connections carry a name of their own, to count them in pg_stat_activity. */
const namedPool = (max: number, extra: pg.PoolConfig = {}) => {
  const applicationName = `mw_${Math.random().toString(36).slice(2, 10)}`;
  const named = new pg.Pool({ connectionString: DATABASE_URL, max, application_name: applicationName, ...extra });
  named.on("error", () => {});
  return { named, applicationName };
};
const backendsOf = async (applicationName: string) =>
  Number(
    (await pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [applicationName]))
      .rows[0].n,
  );
const rowsOf = async (ids: string[]) =>
  Number(
    (await pool.query(`SELECT count(*)::int AS n FROM ${effects} WHERE notification_id = ANY($1)`, [ids])).rows[0].n,
  );
const receiverOn = (
  connection: pg.Pool,
  options: Partial<ReceiverOptions>,
  store: Partial<PostgresStoreOptions> = {},
) =>
  createReceiver({
    idempotency: postgresStore({ connection, schema, ...store }),
    logger: silentLogger(),
    ...options,
  });

/** `count` first deliveries at once: how many answers had each status, and the ids sent. */
async function firstDeliveriesAtOnce(receiver: ReturnType<typeof createReceiver>, count: number) {
  const sent = Array.from({ length: count }, () => notification());
  const answers = await Promise.all(sent.map((n) => receiver.handle(post(json(n)))));
  const tally: Record<number, number> = {};
  for (const { status } of answers) tally[status] = (tally[status] ?? 0) + 1;
  return { tally, ids: sent.map((n) => n.id) };
}

describe("a timed-out handler's statement", () => {
  it("is cancelled on the server: 48 timed-out deliveries through a pool of 4 never hold more than 5 backends", async () => {
    const { named, applicationName } = namedPool(4);
    const receiver = receiverOn(
      named,
      {
        handlerTimeoutMs: 300,
        onRenew: async (n, ctx) => {
          await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id]);
          // Waits on the row lock the test holds, far past the handler's time limit.
          await ctx.transaction.query(`UPDATE "${schema}".counters SET n = n + 1 WHERE id = 1`);
        },
      },
      { timeoutMs: 1_000 },
    );
    const holder = await pool.connect();
    await holder.query(`BEGIN; SELECT n FROM "${schema}".counters WHERE id = 1 FOR UPDATE`);
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, await backendsOf(applicationName));
        await sleep(20);
      }
    })();
    const sent = Array.from({ length: 48 }, () => notification());
    const statuses: number[] = [];
    try {
      for (let at = 0; at < sent.length; at += 12) {
        const batch = await Promise.all(sent.slice(at, at + 12).map((n) => receiver.handle(post(json(n)))));
        statuses.push(...batch.map((answer) => answer.status));
      }
    } finally {
      sampling = false;
      await sampler;
      await holder.query("ROLLBACK");
      holder.release();
    }
    // Each either ran out of time (500) or found every client busy (503); none committed.
    expect(statuses.filter((status) => status !== 500 && status !== 503)).toEqual([]);
    expect(statuses.filter((status) => status === 500).length).toBeGreaterThan(0);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4 + 1);
    // Nothing of them runs on: no backend of the pool still waits on the lock, and no effect was kept.
    await eventually(
      async () =>
        (
          await pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", [
            applicationName,
          ])
        ).rowCount === 0,
      5_000,
      "no statement of the pool still running",
    );
    expect(await rowsOf(sent.map((n) => n.id))).toBe(0);
    await named.end();
  });
});

describe("a handler that throws with a statement still running", () => {
  it("has that statement cancelled, and its client back in the pool with the backend free", async () => {
    const { named, applicationName } = namedPool(2);
    const receiver = receiverOn(
      named,
      {
        onRenew: async (n, ctx) => {
          await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id]);
          // Not awaited: the rollback queues behind it on the connection.
          ctx.transaction.query("SELECT pg_sleep(30)").catch(() => {});
          throw new Error("gave up");
        },
      },
      { timeoutMs: 500 },
    );
    const sent = notification();
    const started = performance.now();
    expect((await receiver.handle(post(json(sent)))).status).toBe(500);
    expect(performance.now() - started).toBeLessThan(10_000);
    const active = async () =>
      (
        await pool.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", [
          applicationName,
        ])
      ).rowCount;
    await eventually(async () => (await active()) === 0, 5_000, "the sleeping statement to end");
    expect(named.totalCount).toBeLessThanOrEqual(2);
    expect(await backendsOf(applicationName)).toBeLessThanOrEqual(2);
    expect(await rowsOf([sent.id])).toBe(0);
    await named.end();
  });
});

describe("a saturated pool", () => {
  it('logs "pool exhausted (N waiting)", answers 503, and keeps health up and the store up', async () => {
    const { named } = namedPool(2);
    const { logger, lines } = captureLogger();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const receiver = createReceiver({
      idempotency: postgresStore({ connection: named, schema, timeoutMs: 300 }),
      logger,
      onRenew: async (n, ctx) => {
        await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id]);
        await held;
      },
    });
    const holding = [notification(), notification()];
    const running = holding.map((n) => receiver.handle(post(json(n))));
    await eventually(async () => named.idleCount === 0 && named.totalCount === 2, 5_000, "both clients busy");
    const refused = await Promise.all(Array.from({ length: 4 }, () => receiver.handle(post(json(notification())))));
    expect(refused.map((answer) => [answer.status, answer.answer.processed])).toEqual(
      Array.from({ length: 4 }, () => [503, false]),
    );
    expect(await receiver.health()).toMatchObject({ ok: true, store: "up" });
    const exhausted = lines().filter((line) => /^pool exhausted \(\d+ waiting\)$/.test(line.msg));
    expect(exhausted.length).toBeGreaterThan(0);
    expect(exhausted[0]).toMatchObject({ store: "postgres", waiting: expect.any(Number) });
    expect(lines().some((line) => /unreachable/.test(line.msg))).toBe(false);
    release();
    expect((await Promise.all(running)).map((answer) => answer.status)).toEqual([200, 200]);
    expect(await rowsOf(holding.map((n) => n.id))).toBe(2);
    await receiver.close();
    await named.end();
  });

  it("warns when the pool it is given has no error listener, and not when it has one", async () => {
    const bare = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    const warned = captureLogger();
    const withoutListener = createReceiver({
      idempotency: postgresStore({ connection: bare, schema }),
      logger: warned.logger,
    });
    await eventually(
      async () => warned.lines().some((line) => /no "error" listener/.test(line.msg)),
      5_000,
      "the warning",
    );
    const { named } = namedPool(1);
    const quiet = captureLogger();
    const withListener = createReceiver({
      idempotency: postgresStore({ connection: named, schema }),
      logger: quiet.logger,
    });
    expect(await withListener.health()).toMatchObject({ store: "up" });
    expect(quiet.lines().some((line) => /no "error" listener/.test(line.msg))).toBe(false);
    await withoutListener.close();
    await withListener.close();
    await bare.end();
    await named.end();
  });
});

describe("isolation", () => {
  it("runs 300 concurrent first deliveries all 200 on connections whose default is serializable", async () => {
    const { named } = namedPool(10, { options: "-c default_transaction_isolation=serializable" });
    const seen = new Set<string>();
    const receiver = receiverOn(named, {
      onRenew: async (n, ctx) => {
        const { rows } = await ctx.transaction.query<{ level: string }>(
          "SELECT current_setting('transaction_isolation') AS level",
        );
        seen.add(rows[0]!.level);
        await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id]);
        await ctx.transaction.query(`SELECT count(*) FROM ${effects} WHERE notification_id = $1`, [n.id]);
      },
    });
    expect((await named.query("SHOW default_transaction_isolation")).rows[0].default_transaction_isolation).toBe(
      "serializable",
    );
    const { tally, ids } = await firstDeliveriesAtOnce(receiver, 300);
    expect(tally).toEqual({ 200: 300 });
    expect([...seen]).toEqual(["read committed"]);
    expect(await rowsOf(ids)).toBe(300);
    await named.end();
  });

  it("begins with the isolationLevel asked for: under serializable, 300 concurrent first deliveries all 200, and claims retry conflicts", async () => {
    const { named } = namedPool(10);
    const store = postgresStore({ connection: named, schema, isolationLevel: "serializable" });
    const seen = new Set<string>();
    const receiver = createReceiver({
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (n, ctx) => {
        const { rows } = await ctx.transaction.query<{ level: string }>(
          "SELECT current_setting('transaction_isolation') AS level",
        );
        seen.add(rows[0]!.level);
        await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id]);
      },
    });
    // The store's own statements take no predicate lock that another first claim writes into.
    const { tally, ids } = await firstDeliveriesAtOnce(receiver, 300);
    expect(tally).toEqual({ 200: 300 });
    expect([...seen]).toEqual(["serializable"]);
    expect(await rowsOf(ids)).toBe(300);
    // Claims outside a handler, each in a serializable transaction reading and writing the records' index.
    const claims = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        store.claim({ id: `serial-${schema}-${i}`, fingerprint: "f", owner: `o${i}`, leaseMs: 10_000 }),
      ),
    );
    expect(claims.filter((claim) => claim.status !== "claimed")).toEqual([]);
    expect(() => postgresStore({ connection: named, schema, isolationLevel: "chaos" as never })).toThrow(
      /isolationLevel must be one of "read committed", "repeatable read", "serializable"/,
    );
    await named.end();
  });
});

describe("migrate, ids and answers", () => {
  it("migrates two tables into one new schema at once, beside a running handler, and apart from a notification whose id is 'migrate'", async () => {
    for (let round = 0; round < 3; round++) {
      const fresh = uniqueSchema("mig");
      try {
        await Promise.all([
          migrate(pool, { schema: fresh, table: "first" }),
          migrate(pool, { schema: fresh, table: "second" }),
        ]);
        const tables = await pool.query("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1", [fresh]);
        expect(tables.rows.map((row) => row.tablename)).toEqual([
          "first",
          "first_fence",
          "first_positions",
          "first_version",
          "second",
          "second_fence",
          "second_positions",
          "second_version",
        ]);
      } finally {
        await dropSchema(pool, fresh);
      }
    }
    // A handler's transaction holding the table (its claim wrote the record) does not hold migrate() up.
    const store = postgresStore({ connection: pool, schema });
    const running = await store.claimInTransaction({
      id: `run-${schema}`,
      fingerprint: "f",
      owner: "o",
      leaseMs: 10_000,
    });
    expect(running.result).toMatchObject({ status: "claimed" });
    try {
      const beside = await Promise.race([
        migrate(pool, { schema }).then(() => "migrated"),
        sleep(5_000).then(() => "blocked"),
      ]);
      expect(beside).toBe("migrated");
    } finally {
      await running.commit({ processed: true, message: "done" });
    }
    // The advisory lock a claim of the id "migrate" takes (one key, the table's prefix and the id),
    // held by another session: migrate() takes its own, in the two-key space, and does not wait.
    const holder = await pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [
        `${schema}.merchant_webhooks_inbox:migrate`,
      ]);
      const done = await Promise.race([
        migrate(pool, { schema }).then(() => "migrated"),
        sleep(5_000).then(() => "blocked"),
      ]);
      expect(done).toBe("migrated");
    } finally {
      await holder.query("SELECT pg_advisory_unlock_all()");
      holder.release();
    }
  });

  it("answers 400 to an id with a NUL character, and 409 with Retry-After 1 (not the lease) while another delivery's transaction holds the id", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const receiver = receiverOn(pool, {
      onRenew: async (n, ctx) => {
        await ctx.transaction.query(`INSERT INTO ${effects} (notification_id) VALUES ($1)`, [n.id]);
        started();
        await held;
      },
    });
    const nul = await receiver.handle(post(json(notification("SUBSCRIPTION_RENEW", "evt\u0000nul"))));
    expect([nul.status, nul.answer.processed]).toEqual([400, false]);
    const sent = notification();
    const first = receiver.handle(post(json(sent)));
    await running;
    const duplicate = await receiver.handle(post(json(sent)));
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers?.["retry-after"]).toBe("1");
    release();
    expect((await first).status).toBe(200);
    expect(await rowsOf([sent.id])).toBe(1);
  });
});
