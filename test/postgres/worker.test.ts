import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { postgresStore } from "merchant-webhooks/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

describe("a BullMQ worker on postgresStore runs the handler in the claim's transaction", () => {
  const schema = uniqueSchema("worker");
  const prefix = uniquePrefix("pgworker");
  const pool = testPool();
  const redis = new Redis(REDIS_URL);
  const store = postgresStore({ connection: pool, schema });
  const queue = bullmqQueue({
    connection: REDIS_URL,
    name: "pg",
    prefix,
    jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
  });
  const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
  const runs: Array<{ id: string; attempt: number; inTransaction: boolean }> = [];
  const worker = createWorker({
    connection: REDIS_URL,
    name: "pg",
    prefix,
    idempotency: store,
    logger: silentLogger(),
    onRenew: async (n, ctx) => {
      runs.push({ id: n.id, attempt: ctx.attempt, inTransaction: ctx.transaction !== undefined });
      await ctx.transaction.query(`INSERT INTO "${schema}".effects (notification_id) VALUES ($1)`, [n.id]);
      if (n.id.endsWith("-fails-once") && ctx.attempt === 1) throw new Error("ledger refused");
    },
  });
  const rowsOf = async (id: string) =>
    Number(
      (await pool.query(`SELECT count(*) FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0].count,
    );

  beforeAll(async () => {
    await freshSchema(pool, schema, `CREATE TABLE "${schema}".effects (notification_id text NOT NULL)`);
  });
  afterAll(async () => {
    await worker.close({ timeoutMs: 5_000 });
    await receiver.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
    await dropSchema(pool, schema);
    await pool.end();
  });

  it("records a notification the receiver queued as queued in PostgreSQL", async () => {
    // A queue no worker reads: the record stays as the receiver left it.
    const idle = bullmqQueue({ connection: REDIS_URL, name: "pg-idle", prefix });
    const queuing = createReceiver({ logger: silentLogger(), idempotency: store, queue: idle });
    const sent = notification();
    expect((await queuing.handle(post(json(sent)))).status).toBe(200);
    expect(await store.get(sent.id)).toMatchObject({ state: "queued", attempts: 1 });
    await queuing.close();
  });

  it("commits the worker's write with the record", async () => {
    const sent = notification();
    const answer = await receiver.handle(post(json(sent)));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ processed: true });
    await eventually(async () => (await store.get(sent.id))?.state === "completed", 15_000, "the worker to complete");
    expect(await rowsOf(sent.id)).toBe(1);
    expect(runs.filter((run) => run.id === sent.id)).toEqual([{ id: sent.id, attempt: 1, inTransaction: true }]);
    // A redelivery is answered from the record and queues nothing.
    expect((await receiver.handle(post(json(sent)))).status).toBe(200);
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("rolls back a failed run's write; the job's retry writes it once", async () => {
    const sent = notification("SUBSCRIPTION_RENEW", `evt-${process.pid}-${Date.now()}-fails-once`);
    expect((await receiver.handle(post(json(sent)))).status).toBe(200);
    await eventually(async () => (await store.get(sent.id))?.state === "completed", 15_000, "the retry to complete");
    expect(runs.filter((run) => run.id === sent.id).map((run) => run.attempt)).toEqual([1, 2]);
    expect(await rowsOf(sent.id)).toBe(1);
  });
});
