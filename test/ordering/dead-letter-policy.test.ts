import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, memoryStore, type OrderingOptions } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { type ConsoleHandler, consoleHandler, createAdmin } from "merchant-webhooks/console";
import { postgresStore } from "merchant-webhooks/postgres";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { dropSchema, freshSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, sleep, uniquePrefix } from "../support/redis.js";
import {
  expectDiscardDrains,
  expectHeld,
  expectRedriveDrains,
  expectRedriveStale,
  expectSentWhileHeldRunsLast,
  laneHandlers,
  type PolicyLane,
  sendUntilDeadLettered,
} from "./fixtures/dead-letter-lane.js";
import { backlog } from "./fixtures/mailbox.js";

/** The stores' lease, short: a held lane stays held past it. */
const LEASE_MS = 1_000;

/**
 * `ordering.onDeadLetter`: what a notification that lands in the dead letters does to the rest of its
 * subscription's lane. Four notifications of one subscription; the second always fails until a flag
 * is flipped; 3 attempts each.
 */
describe.each([
  ["redisStore", "redis"],
  ["memoryStore", "memory"],
  ["postgresStore", "postgres"],
] as const)("ordering.onDeadLetter through BullMQ on %s", (_, kind) => {
  const prefix = uniquePrefix(`lanes-policy-${kind}`);
  const redis = new Redis(REDIS_URL);
  const schema = uniqueSchema("lanes_policy_bullmq");
  const pool = testPool(10);
  const cleanup: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    if (kind === "postgres") await freshSchema(pool, schema);
  });
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(redis, prefix);
    redis.disconnect();
    await dropSchema(pool, schema);
    await pool.end();
  });

  function lane(name: string, onDeadLetter: OrderingOptions["onDeadLetter"]) {
    const store: IdempotencyStore =
      kind === "redis"
        ? redisStore({ connection: REDIS_URL, prefix: `${prefix}${name}-store:`, leaseMs: LEASE_MS })
        : kind === "postgres"
          ? postgresStore({ connection: pool, schema, leaseMs: LEASE_MS })
          : memoryStore();
    if (store.close) cleanup.push(async () => store.close!());
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name,
      prefix,
      jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 50 } },
    });
    cleanup.push(() => queue.close());
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue,
      ordering: { onDeadLetter },
    });
    cleanup.push(() => receiver.close());
    const notifications = backlog(`${prefix}${name}`, 4);
    const second = notifications[1]!.id;
    const handlers = laneHandlers(second);
    // Two workers, as two processes would run: the lane's order holds across them.
    const workers: Array<ReturnType<typeof createWorker>> = [];
    for (let i = 0; i < 2; i++) {
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger: silentLogger(),
        onRenew: handlers.onRenew,
        onStale: handlers.onStale,
        leaseMs: LEASE_MS,
      });
      cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
      workers.push(worker);
    }
    const admin = createAdmin({ idempotency: store, queue });
    const ids = notifications.map((n) => n.id);
    const key = async () => (await admin.getNotification(second))!.ordering!.key;
    const state = async (id: string) => (await admin.getNotification(id))?.record?.state;
    const deadLettered = () =>
      eventually(
        async () => (await state(second)) === "failed" && (await queue.queue.getFailedCount()) === 1,
        30_000,
        "the second notification in the dead letters",
      );
    const lane: PolicyLane = { receiver, admin, notifications, ids, second, ...handlers, key, state, deadLettered };
    return { ...lane, workers };
  }

  it('"hold": the rest wait, neither run nor stale; redriven, the dead letter runs first, then the rest in order', async () => {
    const held = lane("hold-redrive", "hold");
    // Past a lease, time for a worker to look at the held lane again: the rest still wait.
    await sendUntilDeadLettered(held, () => sleep(LEASE_MS * 2 + 500));
    await expectHeld(held);
    // The workers' health() says so too.
    expect((await held.workers[0]!.health()).heldLanes).toBe(1);
    expect((await held.admin.getNotification(held.ids[2]!))?.ordering).toMatchObject({
      waiting: [held.ids[2], held.ids[3]],
    });
    // The console's page of the subscription says it is held, and by which dead letter.
    const ops = consoleHandler({ admin: held.admin, authorize: () => true });
    const subscriptionPath = `/subscriptions/${encodeURIComponent(await held.key())}`;
    expect(await consolePage(ops, subscriptionPath)).toContain(
      `Held: dead letter <a href="/console/notifications/${encodeURIComponent(held.second)}">${held.second}</a> holds this subscription`,
    );

    await expectRedriveDrains(held, () => sleep(500));
    expect(await consolePage(ops, subscriptionPath)).not.toContain("Held:");
  }, 60_000);

  it('"hold": one sent while the lane is held waits too, then runs last, after the redriven dead letter', async () => {
    const held = lane("hold-later", "hold");
    await sendUntilDeadLettered(held, () => sleep(LEASE_MS * 2 + 500));
    const later = backlog(`${prefix}hold-later`, 5)[4]!;
    await expectSentWhileHeldRunsLast(held, later, () => sleep(LEASE_MS * 2 + 500));
  }, 60_000);

  it('"hold": discarded by a person, the dead letter lets the rest run in order', async () => {
    const held = lane("hold-discard", "hold");
    await sendUntilDeadLettered(held, () => sleep(LEASE_MS * 2 + 500));
    expect(await held.admin.heldBy(await held.key())).toBe(held.second);
    await expectDiscardDrains(held, () => sleep(500));
  }, 60_000);

  it('"skip": the rest run; the console says the dead letter is stale before its redrive, which is stale', async () => {
    const skipped = lane("skip", "skip");
    const { admin, ids, second, runs, state } = skipped;
    await sendUntilDeadLettered(skipped);
    await eventually(async () => (await state(ids[3]!)) === "completed", 30_000, "the rest to run");
    expect(runs).toEqual([ids[0], second, second, second, ids[2], ids[3]]);

    // Said before the redrive: on the notification's page and in the bulk redrive's count.
    const detail = await admin.getNotification(second);
    expect(detail?.ordering?.staleIfRedriven).toBe(detail?.ordering?.newestCompleted);
    const page = await consolePage(consoleHandler({ admin, authorize: () => true }), `/notifications/${second}`);
    expect(page).toContain("Stale if redriven");
    const dryRun = await admin.redrive({ filter: { state: "failed" }, dryRun: true });
    expect(dryRun.staleIfRedriven).toEqual([second]);

    await expectRedriveStale(skipped);
  }, 60_000);
});

/** The console's page at `path`, as its HTML. */
async function consolePage(handler: ConsoleHandler, path: string): Promise<string> {
  const response = await handler(new Request(`http://localhost${handler.basePath}${path}`));
  expect(response.status).toBe(200);
  return response.text();
}
