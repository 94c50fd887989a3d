// A BullMQ worker on postgresStore({ orm }): each job's claim, the handler's ORM writes and the
// completion in one transaction the merchant's ORM opened, on real Redis and PostgreSQL.
import { Redis } from "ioredis";
import { createReceiver, type Receiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { postgresStore } from "merchant-webhooks/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { laneOf } from "../pg-boss/fixtures/lane.js";
import { silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted, json, notification } from "../support/notifications.js";
import { DATABASE_URL, dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { knexUnderTest, type OrmUnderTest, typeormUnderTest } from "./fixtures/orm-adapters.js";
import { receiverTablesSql } from "./fixtures/receiver-tables.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

describe.each([
  ["Knex", knexUnderTest],
  ["TypeORM", typeormUnderTest],
])("a BullMQ worker on postgresStore({ orm }) through %s", (_, makeOrm) => {
  const schema = uniqueSchema("ormworker");
  const prefix = uniquePrefix("ormworker");
  const pool = testPool();
  const redis = new Redis(REDIS_URL);
  let orm: OrmUnderTest;
  const runs: Array<{ id: string; attempt: number }> = [];
  const late: Array<Promise<unknown>> = [];
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    await freshSchema(pool, schema, receiverTablesSql(schema));
    orm = await makeOrm(DATABASE_URL, schema);
    const store = postgresStore({ connection: pool, schema, orm: orm.orm });
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name: "orm",
      prefix,
      jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const worker = createWorker({
      connection: REDIS_URL,
      name: "orm",
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (n, ctx) => {
        runs.push({ id: n.id, attempt: ctx.attempt });
        await orm.insertEffect(ctx, n.id);
        if (n.id.endsWith("-fails-once") && ctx.attempt === 1) throw new Error("ledger refused");
        if (n.id.endsWith("-late"))
          late.push(
            new Promise((resolve) => setTimeout(resolve, 200)).then(() => orm.insertEffect(ctx, `${n.id}-after`)),
          );
      },
    });
    deliver = async (body) => (await receiver.handle(post(json(body)))).status;
    get = async (id) => store.get(id);
    closers.push(
      () => worker.close({ timeoutMs: 5_000 }),
      () => receiver.close(),
      () => queue.close(),
    );
    // A subscription's lane, across two workers: each fails its first run of a notification once.
    const lane = bullmqQueue({
      connection: REDIS_URL,
      name: "orm-lane",
      prefix,
      jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
    });
    orderedReceiver = createReceiver({ logger: silentLogger(), idempotency: store, queue: lane, ordering: true });
    const laneWorker = () =>
      createWorker({
        connection: REDIS_URL,
        name: "orm-lane",
        prefix,
        idempotency: store,
        logger: silentLogger(),
        onRenew: async (n, ctx) => {
          laneRuns.push({ id: n.id, attempt: ctx.attempt });
          await orm.insertEffect(ctx, n.id);
          if (laneRuns.filter((run) => run.id === n.id).length === 1) throw new Error("the bank is down for a moment");
          laneDone.push(n.id);
        },
      });
    const laneWorkers = [laneWorker(), laneWorker()];
    closers.push(
      ...laneWorkers.map((each) => () => each.close({ timeoutMs: 5_000 })),
      () => orderedReceiver!.close(),
      () => lane.close(),
    );
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await orm?.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
    await dropSchema(pool, schema);
    await pool.end();
  });

  let deliver: (body: object) => Promise<number> = async () => 0;
  let orderedReceiver: Receiver | undefined;
  const laneRuns: Array<{ id: string; attempt: number }> = [];
  const laneDone: string[] = [];
  let get: (id: string) => Promise<unknown> = async () => undefined;
  const rowsOf = async (id: string) =>
    Number(
      (await pool.query(`SELECT count(*) FROM "${schema}".effects WHERE notification_id = $1`, [id])).rows[0].count,
    );
  const completed = (id: string) =>
    eventually(
      async () => ((await get(id)) as { state?: string } | undefined)?.state === "completed",
      15_000,
      `${id} to complete`,
    );

  it("commits the handler's ORM write with the record, once for several deliveries of one id", async () => {
    const sent = notification();
    const statuses = await Promise.all(Array.from({ length: 5 }, () => deliver(sent)));
    expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
    await completed(sent.id);
    expect(await deliver(sent)).toBe(200);
    expect(await rowsOf(sent.id)).toBe(1);
    expect(runs.filter((run) => run.id === sent.id)).toHaveLength(1);
  });

  it("keeps nothing of a run that throws after its ORM write; the retry runs once and writes one row", async () => {
    const sent = notification("SUBSCRIPTION_RENEW", `evt-${process.pid}-${Date.now()}-fails-once`);
    expect(await deliver(sent)).toBe(200);
    await completed(sent.id);
    expect(runs.filter((run) => run.id === sent.id).map((run) => run.attempt)).toEqual([1, 2]);
    expect(await rowsOf(sent.id)).toBe(1);
  });

  it("refuses a statement through the handler's ORM transaction once its run has settled", async () => {
    const sent = notification("SUBSCRIPTION_RENEW", `evt-${process.pid}-${Date.now()}-late`);
    expect(await deliver(sent)).toBe(200);
    await completed(sent.id);
    const code = await late[0]!.then(
      () => "ran",
      (err: { code?: string }) => err.code,
    );
    expect(code).toBe("MW_TRANSACTION_CLOSED");
    expect(await rowsOf(sent.id)).toBe(1);
    expect(await rowsOf(`${sent.id}-after`)).toBe(0);
  });

  it("keeps a subscription's order through failed runs: each put back in line in the ORM's transaction, one row each", {
    timeout: 60_000,
  }, async () => {
    const sent = laneOf(`SUB-${process.pid}-${schema}`, 4, 6);
    for (const body of sent) await deliverUntilAccepted(orderedReceiver!, body, 50);
    const ids = sent.map((n) => n.id);
    for (const id of ids) await completed(id);
    // In position order, each after its one failed run (attempts 1 then 2), none run a third time.
    expect(laneDone).toEqual(ids);
    for (const id of ids) {
      expect(laneRuns.filter((run) => run.id === id).map((run) => run.attempt)).toEqual([1, 2]);
      expect(await rowsOf(id)).toBe(1);
    }
  });
});
