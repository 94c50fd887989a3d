import { fileURLToPath } from "node:url";
import { postgresStore } from "merchant-webhooks/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliver, deliverUntilSettled } from "../redis/fixtures/deliver.js";
import { type ReceiverProcess, spawnReceiver } from "../redis/fixtures/spawn-receiver.js";
import { notification } from "../support/notifications.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, sleep } from "../support/redis.js";
import { receiverTablesSql } from "./fixtures/receiver-tables.js";

const script = fileURLToPath(new URL("./fixtures/receiver-process.ts", import.meta.url));
const HANDLER_TIMEOUT_MS = 3_000;
const STORE_TIMEOUT_MS = 1_000;
/** What the store bounds a handler's transaction by on the server: its time limit plus the store's. */
const SERVER_BOUND_MS = HANDLER_TIMEOUT_MS + STORE_TIMEOUT_MS;

describe("a handler's transaction when its connection drops or its process freezes", () => {
  const schema = uniqueSchema("fence");
  const pool = testPool();
  const store = postgresStore({ connection: pool, schema });
  const env = {
    DATABASE_URL,
    SCHEMA: schema,
    HANDLER_TIMEOUT_MS: String(HANDLER_TIMEOUT_MS),
    STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS),
  };
  const spawned: ReceiverProcess[] = [];
  const spawn = async (extra: Record<string, string>) => {
    const child = await spawnReceiver({ ...env, ...extra }, { script });
    spawned.push(child);
    return child;
  };
  // Known before the processes start: the fixture picks its slow notifications by id.
  const inStatement = notification();
  const whileIdle = notification();
  const frozenOne = notification();
  let steady: ReceiverProcess;
  let freezing: ReceiverProcess;

  beforeAll(async () => {
    await freshSchema(pool, schema, receiverTablesSql(schema));
    [steady, freezing] = await Promise.all([
      spawn({ SLEEP_IN_DB_ID: inStatement.id, PAUSE_AFTER_INSERT_ID: whileIdle.id, PAUSE_MS: "1500" }),
      spawn({ PAUSE_AFTER_INSERT_ID: frozenOne.id, PAUSE_MS: "2500" }),
    ]);
  }, 60_000);
  afterAll(async () => {
    for (const child of spawned) if (child.child.signalCode === null) child.child.kill("SIGCONT");
    await Promise.all(spawned.map((child) => child.kill()));
    await dropSchema(pool, schema);
    await pool.end();
  });

  const rowsOf = async (id: string) =>
    Number(
      (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0]
        .n,
    );
  const backendOf = async (id: string) => {
    const read = async () =>
      (await pool.query(`SELECT backend FROM "${schema}".signals WHERE notification_id = $1`, [id])).rows[0]?.backend;
    await eventually(async () => (await read()) !== undefined, 15_000, "the handler to insert");
    return (await read()) as number;
  };
  const alive = async (receiver: ReceiverProcess) => {
    const fresh = notification();
    const answers = await deliverUntilSettled(receiver.url, fresh);
    return { status: answers.at(-1)!.status, rows: await rowsOf(fresh.id) };
  };

  for (const [label, sent] of [
    ["running a statement", inStatement],
    ["idle between statements", whileIdle],
  ] as const) {
    it(`answers processed:false when the backend is terminated while the handler is ${label}; the process lives, the retry runs once`, async () => {
      const first = deliver(steady.url, sent);
      const backend = await backendOf(sent.id);
      await pool.query("SELECT pg_terminate_backend($1)", [backend]);
      const answer = await first;
      expect([500, 503]).toContain(answer.status);
      expect(answer.body.processed).toBe(false);
      expect(steady.child.exitCode).toBeNull();
      expect(await alive(steady)).toEqual({ status: 200, rows: 1 });
      expect(await rowsOf(sent.id)).toBe(0);
      // The failed attempt was recorded after the rollback; the retry is attempt 2, which the fixture runs plainly.
      expect(await store.get(sent.id)).toMatchObject({ state: "failed", attempts: 1 });
      expect((await deliverUntilSettled(steady.url, sent)).at(-1)).toMatchObject({
        status: 200,
        body: { processed: true },
      });
      expect(await rowsOf(sent.id)).toBe(1);
    });
  }

  it("bounds a frozen holder whose handler lifted the server's limits (RESET ALL, SET LOCAL ... = 0): a redelivery elsewhere ends it, one effect", async () => {
    const lifted: Record<string, string> = {
      [notification().id]: "RESET ALL",
      [notification().id]: "SET LOCAL idle_in_transaction_session_timeout = 0",
    };
    const sent = Object.keys(lifted).map((id) => ({ ...notification(), id }));
    const lifting = await spawn({ LIFTS: JSON.stringify(lifted) });
    for (const n of sent) void deliver(lifting.url, n).catch(() => undefined);
    for (const n of sent) await backendOf(n.id);
    lifting.child.kill("SIGSTOP");
    const outcomes: Record<string, unknown> = {};
    for (const n of sent) {
      const answers = await deliverUntilSettled(steady.url, n, 100, 3 * SERVER_BOUND_MS + 15_000);
      outcomes[lifted[n.id]!] = { status: answers.at(-1)!.status, effects: await rowsOf(n.id) };
    }
    lifting.child.kill("SIGCONT");
    await sleep(500);
    for (const n of sent) expect(await rowsOf(n.id)).toBe(1);
    expect(outcomes).toEqual(
      Object.fromEntries(Object.values(lifted).map((lift) => [lift, { status: 200, effects: 1 }])),
    );
  }, 120_000);

  it("bounds a frozen holder on the server: a redelivery elsewhere runs within the bound, and the thawed process adds nothing", async () => {
    const first = deliver(freezing.url, frozenOne).catch(() => undefined);
    const backend = await backendOf(frozenOne.id);
    freezing.child.kill("SIGSTOP");
    const frozenAt = performance.now();
    // Elsewhere, the id is held by the frozen transaction: 409 until the server ends that transaction.
    const early = await deliver(steady.url, frozenOne);
    expect(early.status).toBe(409);
    const answers = await deliverUntilSettled(steady.url, frozenOne, 100, SERVER_BOUND_MS + 15_000);
    const ranAfterMs = performance.now() - frozenAt;
    expect(answers.at(-1)).toMatchObject({ status: 200, body: { processed: true } });
    // The handler had started before the freeze; the transaction went idle at its insert.
    expect(ranAfterMs).toBeLessThan(SERVER_BOUND_MS + 5_000);
    expect((await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [backend])).rowCount).toBe(0);
    expect(await rowsOf(frozenOne.id)).toBe(1);

    freezing.child.kill("SIGCONT");
    await first;
    await sleep(500);
    expect(freezing.child.exitCode).toBeNull();
    expect(await alive(freezing)).toEqual({ status: 200, rows: 1 });
    expect(await rowsOf(frozenOne.id)).toBe(1);
    expect(await store.get(frozenOne.id)).toMatchObject({ state: "completed" });
  });
});
