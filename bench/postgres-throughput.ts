import { readFileSync } from "node:fs";
import os from "node:os";
import knexFactory, { type Knex } from "knex";
import { createReceiver, type Receiver } from "merchant-webhooks";
import { migrate, type OrmTransactions, postgresStore } from "merchant-webhooks/postgres";
import { knexTransactions } from "merchant-webhooks/postgres/knex";
import { redisStore } from "merchant-webhooks/redis";
import pg from "pg";
import { pino } from "pino";
import { JSON_HEADERS, renewalBody } from "./renewal-body.js";

/**
 * Notifications per second with 32 in flight, three ways taking turns round after round (so drift in
 * the machine's load affects all alike), each handler inserting one row into the same kind of table:
 *
 *   - `redisStore`, the handler's insert on its own (autocommit) through the pool;
 *   - `postgresStore`, the insert through `ctx.transaction`, committed with the record;
 *   - a hand-written PostgreSQL route: parse the body, then on one pooled client `BEGIN`,
 *     `INSERT ... ON CONFLICT DO NOTHING` of the id into an inbox table, the handler's insert, `COMMIT`.
 *
 * Every way runs in this process on the same pool (max 10), and answers in memory (no HTTP).
 *
 *   npx tsx bench/postgres-throughput.ts   (REDIS_URL, DATABASE_URL; PG_THROUGHPUT_ROUNDS (5),
 *   PG_THROUGHPUT_NOTIFICATIONS per round (2,000), PG_THROUGHPUT_IN_FLIGHT (32); PG_THROUGHPUT_CPU=1
 *   prints this process's and the server's CPU per notification, round by round;
 *   BENCH_BASELINE=<dist dir> adds `postgresStore` of that build (`bench/build-baseline.ts`);
 *   PG_THROUGHPUT_INDEX_COST=1 adds `postgresStore` on a table without the console's event-type and
 *   subscription indexes, to show what they cost; PG_THROUGHPUT_PLAIN=1 adds `postgresStore` with
 *   `preparedStatements: false`, as behind PgBouncer; PG_THROUGHPUT_ORM=1 adds the merchant's ORM owning
 *   the transaction, Knex's, each on its own Knex pool (max 10): `postgresStore({ orm })` with the
 *   handler's insert through `trx` (and the baseline build's, with BENCH_BASELINE), beside a route
 *   written by hand with Knex doing what the hand-written route does, in `knex.transaction`;
 *   PG_THROUGHPUT_ORM_UNPREPARED=1 with it adds the store through an adapter that names no connection,
 *   so that its statements go as text, not prepared)
 */
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const rounds = Number(process.env.PG_THROUGHPUT_ROUNDS ?? 5);
const perRound = Number(process.env.PG_THROUGHPUT_NOTIFICATIONS ?? 2_000);
const inFlight = Number(process.env.PG_THROUGHPUT_IN_FLIGHT ?? 32);

const tag = `mwbench_${process.pid}_${Date.now().toString(36)}`;
// Kept open while the other ways run (pg's default closes a client idle 10 s): the server's CPU per
// round is read from the connections there are, and a connection closed in a round would take its
// CPU out of the count.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, application_name: tag, idleTimeoutMillis: 600_000 });
pool.on("error", () => {}); // an idle client's dropped connection must not end the run
await migrate(pool, { schema: tag });
await pool.query(`CREATE TABLE "${tag}".effects (notification_id text PRIMARY KEY)`);
await pool.query(`CREATE TABLE "${tag}".hand_inbox (id text PRIMARY KEY, received_at timestamptz DEFAULT now())`);
const effect = `INSERT INTO "${tag}".effects VALUES ($1)`;
const redis = redisStore({ connection: redisUrl, prefix: `${tag}:` });
const logger = pino({ level: "silent" });

type Way = (id: string) => Promise<number>;
const viaReceiver =
  (receiver: Receiver): Way =>
  async (id) =>
    (await receiver.handle({ method: "POST", headers: JSON_HEADERS, rawBody: renewalBody(id) })).status;

const decoder = new TextDecoder();
/** What a route written by hand does: parse, claim the id in a transaction, write the effect, commit. */
const handWritten: Way = async (id) => {
  const notification = JSON.parse(decoder.decode(renewalBody(id))) as { id: string };
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const claimed = await client.query(
      `INSERT INTO "${tag}".hand_inbox (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING 1`,
      [notification.id],
    );
    if (claimed.rowCount === 1) await client.query(effect, [notification.id]);
    await client.query("COMMIT");
    client.release();
    return 200;
  } catch (err) {
    client.release(err as Error);
    return 500;
  }
};

const ways: Record<string, Way> = {
  redisStore: viaReceiver(
    createReceiver({
      logger,
      idempotency: redis,
      onRenew: async (notification) => void (await pool.query(effect, [notification.id])),
    }),
  ),
  postgresStore: viaReceiver(
    createReceiver({
      logger,
      idempotency: postgresStore({ connection: pool, schema: tag }),
      onRenew: async (notification, ctx) => void (await ctx.transaction.query(effect, [notification.id])),
    }),
  ),
  hand_written_postgres: handWritten,
};

/** CPU time (µs) the pool's server processes used so far, where the server runs on this machine. */
async function serverCpu(): Promise<number> {
  const { rows } = await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [
    tag,
  ]);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks * 10_000;
}

/** `count` notifications through `way`, `inFlight` at a time; notifications per second. */
async function round(name: string, way: Way, count: number, label: string): Promise<number> {
  let next = 0;
  const cpu = process.cpuUsage();
  const serverBefore = await serverCpu();
  const started = performance.now();
  const lane = async () => {
    while (next < count) {
      const id = `${name}-${label}-${next++}`;
      const status = await way(id);
      if (status !== 200) throw new Error(`${name}: unexpected ${status}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const used = process.cpuUsage(cpu);
  const server = (await serverCpu()) - serverBefore;
  if (process.env.PG_THROUGHPUT_CPU)
    console.error(
      name,
      "node cpu us/notification",
      Math.round((used.user + used.system) / count),
      "server",
      Math.round(server / count),
    );
  return count / ((performance.now() - started) / 1000);
}

const baseline = process.env.BENCH_BASELINE;
if (baseline) {
  const core = (await import(`${baseline}/index.js`)) as typeof import("merchant-webhooks");
  const postgres = (await import(`${baseline}/postgres.js`)) as typeof import("merchant-webhooks/postgres");
  await postgres.migrate(pool, { schema: tag, table: "baseline_inbox" });
  ways.baseline_postgresStore = viaReceiver(
    core.createReceiver({
      logger,
      idempotency: postgres.postgresStore({ connection: pool, schema: tag, table: "baseline_inbox" }),
      onRenew: async (notification, ctx) => void (await ctx.transaction.query(effect, [notification.id])),
    }),
  );
}

// What the console's event-type and subscription indexes cost a delivery: the same store on a table without them.
if (process.env.PG_THROUGHPUT_INDEX_COST) {
  await migrate(pool, { schema: tag, table: "unlisted_inbox" });
  await pool.query(`DROP INDEX "${tag}".unlisted_inbox_event_type, "${tag}".unlisted_inbox_subscription`);
  ways.postgresStore_without_list_indexes = viaReceiver(
    createReceiver({
      logger,
      idempotency: postgresStore({ connection: pool, schema: tag, table: "unlisted_inbox" }),
      onRenew: async (notification, ctx) => void (await ctx.transaction.query(effect, [notification.id])),
    }),
  );
}

// What the statements sent as text cost (behind a pooler in transaction mode): the same store, nothing prepared.
if (process.env.PG_THROUGHPUT_PLAIN) {
  await migrate(pool, { schema: tag, table: "plain_inbox" });
  ways.postgresStore_plain = viaReceiver(
    createReceiver({
      logger,
      idempotency: postgresStore({ connection: pool, schema: tag, table: "plain_inbox", preparedStatements: false }),
      onRenew: async (notification, ctx) => void (await ctx.transaction.query(effect, [notification.id])),
    }),
  );
}

// The merchant's ORM owning the transaction (Knex), against the same route written by hand with Knex.
const knexPools: Knex[] = [];
if (process.env.PG_THROUGHPUT_ORM) {
  const knexPool = () => {
    const knex = knexFactory({
      client: "pg",
      connection: { connectionString: databaseUrl, application_name: tag },
      // Kept open between its rounds, as the pg pool's are while others run.
      pool: { min: 0, max: 10, idleTimeoutMillis: 600_000 },
    });
    knexPools.push(knex);
    return knex;
  };
  const knexEffect = `INSERT INTO "${tag}".effects VALUES (?)`;
  const viaOrm = (orm: OrmTransactions<Knex.Transaction>, table: string, make = { createReceiver, postgresStore }) =>
    viaReceiver(
      make.createReceiver({
        logger,
        idempotency: make.postgresStore({ connection: pool, schema: tag, table, orm }),
        onRenew: async (notification, ctx) => void (await orm.transactionOf(ctx).raw(knexEffect, [notification.id])),
      }),
    );
  await migrate(pool, { schema: tag, table: "knex_inbox" });
  ways.knex_orm_postgresStore = viaOrm(knexTransactions(knexPool()), "knex_inbox");
  await pool.query(
    `CREATE TABLE "${tag}".knex_hand_inbox (id text PRIMARY KEY, received_at timestamptz DEFAULT now())`,
  );
  const handKnex = knexPool();
  ways.knex_hand_written = async (id) => {
    const notification = JSON.parse(decoder.decode(renewalBody(id))) as { id: string };
    try {
      await handKnex.transaction(async (trx) => {
        const claimed = await trx.raw(
          `INSERT INTO "${tag}".knex_hand_inbox (id) VALUES (?) ON CONFLICT DO NOTHING RETURNING 1`,
          [notification.id],
        );
        if (claimed.rowCount === 1) await trx.raw(knexEffect, [notification.id]);
      });
      return 200;
    } catch (err) {
      console.error("knex_hand_written", err);
      return 500;
    }
  };
  if (process.env.PG_THROUGHPUT_ORM_UNPREPARED) {
    // The same adapter, its connection unnamed: the store sends its first claim and seal as text.
    const named = knexTransactions(knexPool());
    const unnamed: OrmTransactions<Knex.Transaction> = {
      run: (gate, work) => named.run(gate, (transaction) => work({ ...transaction, connection: undefined })),
      transactionOf: named.transactionOf,
    };
    await migrate(pool, { schema: tag, table: "knex_text_inbox" });
    ways.knex_orm_unprepared_postgresStore = viaOrm(unnamed, "knex_text_inbox");
  }
  if (baseline) {
    const core = (await import(`${baseline}/index.js`)) as typeof import("merchant-webhooks");
    const postgres = (await import(`${baseline}/postgres.js`)) as typeof import("merchant-webhooks/postgres");
    const knex = (await import(`${baseline}/postgres/knex.js`)) as typeof import("merchant-webhooks/postgres/knex");
    await postgres.migrate(pool, { schema: tag, table: "baseline_knex_inbox" });
    ways.baseline_knex_orm_postgresStore = viaOrm(knex.knexTransactions(knexPool()), "baseline_knex_inbox", {
      createReceiver: core.createReceiver,
      postgresStore: postgres.postgresStore as typeof postgresStore,
    });
  }
}

const names = Object.keys(ways);
for (const name of names) await round(name, ways[name]!, 300, "warm");
const load_before = os.loadavg();
const rates: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
const ratios: Record<string, number[]> = { postgres_vs_redis: [], postgres_vs_hand_written: [] };
if (baseline) ratios.postgres_vs_baseline = [];
if (process.env.PG_THROUGHPUT_INDEX_COST) ratios.with_list_indexes_vs_without = [];
if (process.env.PG_THROUGHPUT_PLAIN) ratios.plain_vs_hand_written = [];
if (process.env.PG_THROUGHPUT_ORM) ratios.knex_orm_vs_knex_hand_written = [];
if (process.env.PG_THROUGHPUT_ORM && baseline) ratios.knex_orm_vs_baseline = [];
if (process.env.PG_THROUGHPUT_ORM_UNPREPARED) ratios.knex_orm_prepared_vs_unprepared = [];
for (let r = 0; r < rounds; r++) {
  // Each round starts with another way, so none always runs first.
  const order = names.map((_, i) => names[(i + r) % names.length]!);
  const got: Record<string, number> = {};
  for (const name of order) got[name] = await round(name, ways[name]!, perRound, `r${r}`);
  for (const name of names) rates[name]!.push(Math.round(got[name]!));
  ratios.postgres_vs_redis!.push(got.postgresStore! / got.redisStore!);
  ratios.postgres_vs_hand_written!.push(got.postgresStore! / got.hand_written_postgres!);
  if (baseline) ratios.postgres_vs_baseline!.push(got.postgresStore! / got.baseline_postgresStore!);
  if (process.env.PG_THROUGHPUT_INDEX_COST)
    ratios.with_list_indexes_vs_without!.push(got.postgresStore! / got.postgresStore_without_list_indexes!);
  if (process.env.PG_THROUGHPUT_PLAIN)
    ratios.plain_vs_hand_written!.push(got.postgresStore_plain! / got.hand_written_postgres!);
  if (ratios.knex_orm_vs_knex_hand_written)
    ratios.knex_orm_vs_knex_hand_written.push(got.knex_orm_postgresStore! / got.knex_hand_written!);
  if (ratios.knex_orm_vs_baseline)
    ratios.knex_orm_vs_baseline.push(got.knex_orm_postgresStore! / got.baseline_knex_orm_postgresStore!);
  if (ratios.knex_orm_prepared_vs_unprepared)
    ratios.knex_orm_prepared_vs_unprepared.push(got.knex_orm_postgresStore! / got.knex_orm_unprepared_postgresStore!);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const two = (value: number) => Math.round(value * 100) / 100;
console.log(
  JSON.stringify(
    {
      in_flight: inFlight,
      notifications_per_round: perRound,
      rounds,
      per_second: Object.fromEntries(
        names.map((name) => [name, { median: median(rates[name]!), rounds: rates[name] }]),
      ),
      ratios: Object.fromEntries(
        Object.entries(ratios).map(([name, values]) => [
          name,
          { median: two(median(values)), rounds: values.map(two) },
        ]),
      ),
      load_before,
      load_after: os.loadavg(),
      node: process.version,
    },
    null,
    2,
  ),
);

// Leave both servers as they were found.
for (const knex of knexPools) await knex.destroy();
await pool.query(`DROP SCHEMA "${tag}" CASCADE`);
await pool.end();
await redis.close();
