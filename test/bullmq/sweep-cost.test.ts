import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor, sweepQueued } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { laneOf } from "../pg-boss/fixtures/lane.js";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { countingReads } from "../support/counting-reads.js";
import { deliverUntilAccepted, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, sleep } from "../support/redis.js";
import { redisTestbed } from "../support/redis-testbed.js";

const LOST = "notifications whose job was lost were queued again from the ledger";
const RECORD_GONE = "notifications whose record was gone were queued again from the ledger";

describe("the ledger sweep costs what it finds, and warns only about a job that is gone", () => {
  const { prefix, storePrefix, redis, store, closeAfter } = redisTestbed("sweep-cost");

  function line(name: string, ordering: boolean | { key: (n: SubscriptionNotification) => string }) {
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering });
    closeAfter(
      () => receiver.close(),
      () => queue.close(),
    );
    return { queue, receiver };
  }

  function worker(
    name: string,
    onRenew: (n: SubscriptionNotification) => Promise<void>,
    logger = silentLogger(),
    sweepQueuedEveryMs = 200,
  ) {
    const started = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: store,
      logger,
      sweepQueuedEveryMs,
      onRenew,
    });
    closeAfter(() => started.close({ timeoutMs: 1_000 }));
    return started;
  }

  it("reads a running lane's waiting copies without one record read each", async () => {
    const { queue, receiver } = line("cost", { key: (n) => n.resource.id ?? "none" });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sent = laneOf(`SUB-${process.pid}-cost`, 41, 11);
    const [first, ...waiting] = sent.map((n) => n.id);
    const started: string[] = [];
    worker(
      "cost",
      async (n) => {
        started.push(n.id);
        if (n.id === first) await held;
      },
      silentLogger(),
      0,
    );
    for (const body of sent) await deliverUntilAccepted(receiver, body, 5);
    await eventually(() => started.includes(first!), 10_000, "the lane's first run");
    // On a Redis Cluster each waiting notification of a lane keeps a copy on another master than the
    // queue's (see `bullmqQueue`'s add): written here as a cluster receiver writes them.
    const sub = sent[0]!.resource.id!;
    const copyOf = (id: string) => ({
      id,
      event_type: "SUBSCRIPTION_RENEW",
      order: { key: sub },
      headers: {},
      receivedAt: Date.now(),
      fingerprint: "copy",
    });
    for (const id of waiting) await queue.ledger.keep(id, copyOf(id), queue.ledger.partFor(id));
    const { store: counting, reads: readsMade } = countingReads(store);

    // Every command naming this test's keys while the sweep runs (MONITOR: the shared Redis serves others too).
    const monitor = await redis.monitor();
    let commands = 0;
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args.some((arg) => arg.includes(prefix))) commands++;
    });
    await sleep(100);
    const result = await sweepQueued({ queue, store: counting, olderThanMs: 0 });
    await sleep(100);
    monitor.disconnect();
    console.log(
      `one sweep of ${waiting.length} waiting copies: ${commands} Redis commands, ${readsMade()} record reads`,
    );
    expect(commands).toBeLessThan(waiting.length / 2);
    expect(result).toMatchObject({ checked: waiting.length, requeued: 0, dropped: 0 });
    // Before, one record read per copy (40 here; 975 a sweep in a cluster trial); now one look at the lane.
    expect(readsMade()).toBe(0);
    release();
    await eventually(
      async () =>
        (await Promise.all(sent.map((n) => store.get({ id: n.id, order: { key: n.resource.id! } })))).every(
          (r) => r?.state === "completed",
        ),
      15_000,
      "the lane to drain",
    );
  });

  it("warns about a job deleted from the queue, not about a copy whose record is gone", async () => {
    const { queue, receiver } = line("warn", false);
    const sent = Array.from({ length: 5 }, () => notification());
    for (const body of sent) await deliverUntilAccepted(receiver, body, 5);
    // A copy with no record and no job: what a receiver leaves whose enqueue was refused after the copy
    // was written (it released its claim and answered 503) — no job was lost.
    const orphan = notification();
    await deliverUntilAccepted(receiver, orphan, 5);
    expect(await queue.queue.remove(jobIdFor(orphan.id))).toBe(1);
    const recordKeys = (await redis.keys(`${storePrefix}*`)).filter((k) => k.endsWith(orphan.id));
    expect(recordKeys.length).toBeGreaterThan(0);
    await redis.del(...recordKeys);
    expect(await store.get(orphan.id)).toBeUndefined();
    const { logger, lines } = captureLogger();
    const ran: string[] = [];
    worker("warn", async (n) => void ran.push(n.id), logger);
    await eventually(() => lines().some((l) => l.msg === RECORD_GONE), 10_000, "the record-gone line");
    await eventually(() => sent.every((n) => ran.includes(n.id)), 10_000, "the notifications to run");
    await sleep(600);
    expect(lines().filter((l) => l.msg === LOST)).toEqual([]);

    // A job deleted from the queue while its record waits: really gone, and said so.
    const paused = line("warn-lost", false);
    const lostOne = notification();
    await deliverUntilAccepted(paused.receiver, lostOne, 5);
    expect((await store.get(lostOne.id))?.state).toBe("queued");
    expect(await paused.queue.queue.remove(jobIdFor(lostOne.id))).toBe(1);
    const { logger: lostLogger, lines: lostLines } = captureLogger();
    worker("warn-lost", async (n) => void ran.push(n.id), lostLogger);
    await eventually(() => lostLines().some((l) => l.msg === LOST), 10_000, "the lost job's warning");
    await eventually(() => ran.includes(lostOne.id), 10_000, "the lost job's notification to run");
  });
});
