import { Redis } from "ioredis";
import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { postgresStore } from "merchant-webhooks/postgres";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted } from "../support/notifications.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

describe("ordering through BullMQ workers on postgresStore", () => {
  const schema = uniqueSchema("wqorder");
  const prefix = uniquePrefix("pgwqorder");
  const pool = testPool(20);
  const redis = new Redis(REDIS_URL);
  const store = postgresStore({ connection: pool, schema });
  const queue = bullmqQueue({ connection: REDIS_URL, name: "ordered", prefix });
  const withoutTransaction: string[] = [];
  // Every run, in the workers or the receiver, writes through the transaction its record commits in.
  const write = (table: string) => async (n: SubscriptionNotification, ctx: HandlerContext) => {
    if (!ctx.transaction) withoutTransaction.push(n.id);
    await ctx.transaction.query(`INSERT INTO "${schema}".${table} (notification_id, position) VALUES ($1, $2)`, [
      n.id,
      n.resource.update_time,
    ]);
  };
  const receiverLog = captureLogger();
  const receiver = createReceiver({
    logger: receiverLog.logger,
    idempotency: store,
    queue,
    ordering: true,
    onStale: write("stale"),
  });
  const workers = [0, 1].map(() =>
    createWorker({
      connection: REDIS_URL,
      name: "ordered",
      prefix,
      idempotency: store,
      logger: silentLogger(),
      concurrency: 4,
      onRenew: write("effects"),
      onStale: write("stale"),
    }),
  );

  beforeAll(async () => {
    await freshSchema(
      pool,
      schema,
      `CREATE TABLE "${schema}".effects (seq serial PRIMARY KEY, notification_id text NOT NULL, position text NOT NULL);
       CREATE TABLE "${schema}".stale (notification_id text NOT NULL, position text NOT NULL)`,
    );
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close({ timeoutMs: 5_000 })));
    await receiver.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
    await dropSchema(pool, schema);
    await pool.end();
  });

  it("says once at start-up that ordered notifications run one job each on this store; a store with mailboxes does not", async () => {
    const line = (log: ReturnType<typeof captureLogger>) =>
      log.lines().filter((entry) => entry.mailbox === false && entry.level === 30);
    expect(line(receiverLog)).toHaveLength(1);
    expect(line(receiverLog)[0]!.msg).toContain("each ordered notification runs as its own queued job");
    const withMailboxes = captureLogger();
    const ownQueue = bullmqQueue({ connection: REDIS_URL, name: "with-mailboxes", prefix });
    const other = createReceiver({ logger: withMailboxes.logger, queue: ownQueue, ordering: true });
    await other.close();
    expect(line(withMailboxes)).toEqual([]);
  });

  it("runs a subscription's shuffled notifications in position order, older ones to onStale, none lost, each in a transaction", async () => {
    const sub = `SUB-${process.pid}-queued`;
    const sent = Array.from({ length: 12 }, (_, i) =>
      buildNotification(
        "SUBSCRIPTION_RENEW",
        { resource: { id: sub, update_time: `2026-03-01T03:${String(i).padStart(2, "0")}:00Z` } },
        { random: true },
      ),
    );
    const shuffled = [5, 2, 9, 0, 11, 7, 3, 10, 1, 8, 4, 6].map((i) => sent[i]!);
    // All at once, so the workers find several of the subscription queued together.
    await Promise.all(shuffled.map((n) => deliverUntilAccepted(receiver, n, 20)));
    await eventually(
      async () => {
        const states = await Promise.all(sent.map(async (n) => (await store.get(n.id))?.state));
        return states.every((state) => state === "completed");
      },
      20_000,
      "every notification to complete",
    );
    const effects = (await pool.query(`SELECT notification_id, position FROM "${schema}".effects ORDER BY seq`)).rows;
    const stale = (await pool.query(`SELECT notification_id FROM "${schema}".stale`)).rows;
    const positions = effects.map((row) => Date.parse(row.position));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect([...effects, ...stale].map((row) => row.notification_id).sort()).toEqual(sent.map((n) => n.id).sort());
    expect(effects.at(-1)!.notification_id).toBe(sent.at(-1)!.id);
    expect(withoutTransaction).toEqual([]);
  });
});
