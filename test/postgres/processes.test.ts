import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresStore } from "merchant-webhooks/postgres";
import { notification } from "../support/notifications.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually } from "../support/redis.js";
import { deliver, deliverPast503, deliverUntilSettled } from "../redis/fixtures/deliver.js";
import { spawnReceiver, type ReceiverProcess } from "../redis/fixtures/spawn-receiver.js";
import { receiverTablesSql } from "./fixtures/receiver-tables.js";

const script = fileURLToPath(new URL("./fixtures/receiver-process.ts", import.meta.url));
/** Far longer than the test: a redelivery that runs had no lease to wait for. */
const LEASE_MS = 60_000;

describe("receiver processes on one PostgreSQL, effects in the merchant's table", () => {
  const schema = uniqueSchema("procs");
  const pool = testPool();
  const store = postgresStore({ connection: pool, schema });
  const env = { DATABASE_URL, SCHEMA: schema, LEASE_MS: String(LEASE_MS) };
  const spawned: ReceiverProcess[] = [];
  const spawn = async (extra: Record<string, string> = {}) => {
    const child = await spawnReceiver({ ...env, ...extra }, { script });
    spawned.push(child);
    return child;
  };
  let first: ReceiverProcess;
  let second: ReceiverProcess;

  beforeAll(async () => {
    await freshSchema(pool, schema, receiverTablesSql(schema));
    [first, second] = await Promise.all([spawn(), spawn()]);
  });
  afterAll(async () => {
    await Promise.all(spawned.map((child) => child.kill()));
    await dropSchema(pool, schema);
    await pool.end();
  });

  const rowsOf = async (ids: string[]) =>
    (
      await pool.query<{ rows: number; distinct: number }>(
        `SELECT count(*)::int AS rows, count(DISTINCT notification_id)::int AS distinct FROM "${schema}".effects
         WHERE notification_id = ANY($1)`,
        [ids],
      )
    ).rows[0]!;

  it("writes 200 effects for 200 notifications each delivered twice at once, to two processes", async () => {
    const sent = Array.from({ length: 200 }, () => notification());
    const finals: number[] = [];
    // Twenty notifications at a time, each to both processes at the same moment.
    for (let at = 0; at < sent.length; at += 20) {
      const batch = sent.slice(at, at + 20);
      const answers = await Promise.all(
        batch.flatMap((n) => [deliverUntilSettled(first.url, n), deliverUntilSettled(second.url, n)]),
      );
      finals.push(...answers.map((each) => each.at(-1)!.status));
    }
    expect(finals.filter((status) => status === 200)).toHaveLength(400);
    expect(await rowsOf(sent.map((n) => n.id))).toEqual({ rows: 200, distinct: 200 });
  });

  it("runs the redelivery of a notification whose process was killed after its insert at once, once", async () => {
    const hung = notification();
    const doomed = await spawn({ HANG_AFTER_INSERT_ID: hung.id });
    void deliver(doomed.url, hung).catch(() => {}); // its connection dies with the process
    const signal = async () =>
      (await pool.query(`SELECT backend FROM "${schema}".signals WHERE notification_id = $1`, [hung.id])).rows[0];
    await eventually(async () => (await signal()) !== undefined, 15_000, "the handler to insert");
    const { backend } = await signal();
    // Inserted in the open transaction: not visible, and the claim is not committed either.
    expect(await rowsOf([hung.id])).toEqual({ rows: 0, distinct: 0 });
    expect(await store.get(hung.id)).toBeUndefined();
    await doomed.kill();
    // The database rolls the dead connection's transaction back and frees its lock as it sees the
    // connection close; the lease (a minute) plays no part.
    await eventually(
      async () => (await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [backend])).rowCount === 0,
      15_000,
      "the database to drop the dead connection",
    );
    const answer = await deliverPast503(second.url, hung);
    expect(answer).toMatchObject({ status: 200, body: { processed: true } });
    expect(await rowsOf([hung.id])).toEqual({ rows: 1, distinct: 1 });
    expect(await store.get(hung.id)).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("answers the retry of a notification committed by a process killed before its answer from the record", async () => {
    const held = notification();
    const doomed = await spawn({ HOLD_ANSWER_ID: held.id });
    void deliver(doomed.url, held).catch(() => {});
    await eventually(async () => (await store.get(held.id))?.state === "completed", 15_000, "the commit");
    await doomed.kill();
    const retry = await deliverPast503(second.url, held);
    expect(retry).toMatchObject({ status: 200, body: { processed: true } });
    // The handler did not run again: the one row is the killed process's.
    expect(await rowsOf([held.id])).toEqual({ rows: 1, distinct: 1 });
    const [row] = (await pool.query(`SELECT pid FROM "${schema}".effects WHERE notification_id = $1`, [held.id])).rows;
    expect(row.pid).toBe(doomed.pid);
  });
});
