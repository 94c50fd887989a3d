import { Redis } from "ioredis";
import {
  createReceiver,
  type IdempotencyStore,
  memoryStore,
  type OrderingOptions,
  type SubscriptionNotification,
} from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { type ConsoleHandler, consoleHandler, createAdmin } from "merchant-webhooks/console";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { backlog, sendAll } from "./fixtures/mailbox.js";

/**
 * `ordering.onDeadLetter`: what a notification that lands in the dead letters does to the rest of its
 * subscription's lane. Four notifications of one subscription; the second always fails until a flag
 * is flipped; 3 attempts each.
 */
describe.each([
  ["redisStore", "redis"],
  ["memoryStore", "memory"],
] as const)("ordering.onDeadLetter through BullMQ on %s", (_, kind) => {
  const prefix = uniquePrefix(`lanes-policy-${kind}`);
  const redis = new Redis(REDIS_URL);
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  function lane(name: string, onDeadLetter: OrderingOptions["onDeadLetter"]) {
    const store: IdempotencyStore =
      kind === "redis" ? redisStore({ connection: REDIS_URL, prefix: `${prefix}${name}-store:` }) : memoryStore();
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
    const broken = { value: true };
    const runs: string[] = [];
    const stale: string[] = [];
    // Two workers, as two processes would run: the lane's order holds across them.
    for (let i = 0; i < 2; i++) {
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger: silentLogger(),
        onRenew: async (n: SubscriptionNotification) => {
          runs.push(n.id);
          if (n.id === second && broken.value) throw new Error("downstream down");
        },
        onStale: async (n: SubscriptionNotification) => {
          stale.push(n.id);
        },
      });
      cleanup.push(() => worker.close({ timeoutMs: 1_000 }));
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
    return { store, queue, receiver, admin, notifications, ids, second, broken, runs, stale, key, state, deadLettered };
  }

  it('"hold": the rest wait, neither run nor stale; redriven, the dead letter runs first, then the rest in order', async () => {
    const { receiver, admin, notifications, ids, second, broken, runs, stale, key, state, deadLettered } = lane(
      "hold-redrive",
      "hold",
    );
    await sendAll(receiver, notifications);
    await deadLettered();
    expect(runs).toEqual([ids[0], second, second, second]);
    expect(await state(ids[2]!)).toBe("queued");
    expect(await state(ids[3]!)).toBe("queued");
    expect(await admin.heldBy(await key())).toBe(second);
    const detail = await admin.getNotification(ids[2]!);
    expect(detail?.ordering).toMatchObject({ heldBy: second, waiting: [ids[2], ids[3]] });
    // Degraded but running: health() says which lane waits for a person, and stays ok.
    const health = await receiver.health();
    expect(health).toMatchObject({ ok: true, heldLanes: 1, oldestHeldLane: { key: await key(), id: second } });
    // The console's page of the subscription says it is held, and by which dead letter.
    const ops = consoleHandler({ admin, authorize: () => true });
    const subscriptionPath = `/subscriptions/${encodeURIComponent(await key())}`;
    const heldPage = await consolePage(ops, subscriptionPath);
    expect(heldPage).toContain(
      `Held: dead letter <a href="/console/notifications/${encodeURIComponent(second)}">${second}</a> holds this subscription`,
    );

    broken.value = false;
    runs.length = 0;
    const result = await admin.redrive({ ids: [second] });
    expect(result).toMatchObject({ redriven: 1, skipped: [] });
    await eventually(async () => (await state(ids[3]!)) === "completed", 30_000, "the lane to drain");
    expect(runs).toEqual([second, ids[2], ids[3]]);
    expect(stale).toEqual([]);
    expect(await admin.heldBy(await key())).toBeUndefined();
    expect((await receiver.health()).heldLanes).toBe(0);
    expect(await consolePage(ops, subscriptionPath)).not.toContain("Held:");
  }, 60_000);

  it('"hold": discarded by a person, the dead letter lets the rest run in order', async () => {
    const { receiver, admin, notifications, ids, second, runs, stale, key, state, deadLettered } = lane(
      "hold-discard",
      "hold",
    );
    await sendAll(receiver, notifications);
    await deadLettered();
    expect(await admin.heldBy(await key())).toBe(second);
    runs.length = 0;
    expect(await admin.discard(second, { reason: "refunded by hand" })).toMatchObject({ discarded: true });
    await eventually(async () => (await state(ids[3]!)) === "completed", 30_000, "the lane to drain");
    expect(runs).toEqual([ids[2], ids[3]]);
    expect(stale).toEqual([]);
    expect(await state(second)).toBe("completed");
    expect(await admin.heldBy(await key())).toBeUndefined();
  }, 60_000);

  it('"skip": the rest run; the console says the dead letter is stale before its redrive, which is stale', async () => {
    const { receiver, admin, notifications, ids, second, broken, runs, stale, state, deadLettered } = lane(
      "skip",
      "skip",
    );
    await sendAll(receiver, notifications);
    await deadLettered();
    await eventually(async () => (await state(ids[3]!)) === "completed", 30_000, "the rest to run");
    expect(runs).toEqual([ids[0], second, second, second, ids[2], ids[3]]);

    // Said before the redrive: on the notification's page and in the bulk redrive's count.
    const detail = await admin.getNotification(second);
    expect(detail?.ordering?.staleIfRedriven).toBe(detail?.ordering?.newestCompleted);
    const page = await consolePage(consoleHandler({ admin, authorize: () => true }), `/notifications/${second}`);
    expect(page).toContain("Stale if redriven");
    const dryRun = await admin.redrive({ filter: { state: "failed" }, dryRun: true });
    expect(dryRun.staleIfRedriven).toEqual([second]);

    broken.value = false;
    runs.length = 0;
    await admin.redrive({ ids: [second] });
    await eventually(async () => (await state(second)) === "completed", 30_000, "the redriven one to settle");
    expect(stale).toEqual([second]);
    expect(runs).toEqual([]);
  }, 60_000);
});

/** The console's page at `path`, as its HTML. */
async function consolePage(handler: ConsoleHandler, path: string): Promise<string> {
  const response = await handler(new Request(`http://localhost${handler.basePath}${path}`));
  expect(response.status).toBe(200);
  return response.text();
}
