import type { Cluster } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor, sweepQueued } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { orderedKeys } from "../../src/redis/ordered-scripts.js";
import { orderContract } from "../idempotency/order-contract.js";
import { backlog, sendAll } from "../ordering/fixtures/mailbox.js";
import { expectEachSubscriptionInOrder, readCalls, recordingHandlers } from "../ordering/fixtures/recorded-calls.js";
import { silentLogger } from "../support/capture-logger.js";
import { countingReads } from "../support/counting-reads.js";
import { eventually, sleep } from "../support/redis.js";
import { clusterForFile } from "./fixtures/cluster-suite.js";

const cluster = await clusterForFile("test/cluster/ordering.test.ts");
let stores = 0;

// The two-key scripts on a real cluster: a key outside the script's slot would fail with CROSSSLOT.
if (cluster)
  orderContract("redisStore on a Redis Cluster", async () =>
    redisStore({ connection: await cluster.client(), prefix: `order-contract-${++stores}:` }),
  );

describe.skipIf(!cluster)("ordered records on a Redis Cluster of 3 masters", () => {
  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);

  it("keeps each subscription's records and position in one slot, and spreads subscriptions over every master", async () => {
    const client: Cluster = await cluster!.client();
    const prefix = "order-spread:";
    const store = redisStore({ connection: client, prefix });
    const subscriptions = Array.from({ length: 300 }, (_, i) => `M-1:SUB-${i}`);
    // An id belongs to one subscription (a used id under another answers 422): each has its own ids.
    for (const key of subscriptions) {
      for (const [n, position] of ["2026-03-01T02:00:00", "2026-03-01T03:00:00"].entries()) {
        const owner = `${key}-${n}`;
        expect(
          await store.claim({
            id: `evt-${key}-${n}`,
            fingerprint: "f",
            owner,
            leaseMs: 30_000,
            order: { key, position },
          }),
        ).toMatchObject({ status: "claimed" });
        expect(
          await store.complete(
            { id: `evt-${key}-${n}`, owner: owner, order: { key: key } },
            { processed: true, message: "processed" },
          ),
        ).toBe(true);
      }
    }
    const slotOf = (key: string) => client.cluster("KEYSLOT", key) as Promise<number>;
    const slots = new Set<number>();
    for (const key of subscriptions) {
      const keys = orderedKeys(prefix, key, `evt-${key}-0`);
      const slot = await slotOf(keys.order);
      expect(await slotOf(keys.record)).toBe(slot);
      expect(await slotOf(orderedKeys(prefix, key, `evt-${key}-1`).record)).toBe(slot);
      slots.add(slot);
    }
    // Spread is per subscription: 300 subscriptions land in (nearly) 300 slots, on all three masters.
    expect(slots.size).toBeGreaterThan(250);
    const perMaster = await Promise.all(client.nodes("master").map((node) => node.dbsize()));
    for (const count of perMaster) expect(count).toBeGreaterThan(100);
  });

  it("sweeps a running lane's waiting copies on every master without one record read each", async () => {
    const client: Cluster = await cluster!.client();
    const storePrefix = "sweep-cost:";
    const queuePrefix = "{sweep-cost}";
    const store = redisStore({ connection: client, prefix: storePrefix });
    const queue = bullmqQueue({ connection: client, name: "lanes", prefix: queuePrefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const lane = backlog("sweep-cost", 41);
    const [first, ...waiting] = lane.map((n) => n.id);
    const started: string[] = [];
    const worker = createWorker({
      connection: client,
      name: "lanes",
      prefix: queuePrefix,
      idempotency: store,
      logger: silentLogger(),
      sweepQueuedEveryMs: 0,
      onRenew: async (n) => {
        started.push(n.id);
        if (n.id === first) await held;
      },
    });
    try {
      await sendAll(receiver, lane);
      await eventually(() => started.includes(first!), 10_000, "the lane's first run");
      // A cluster receiver keeps a copy of each waiting notification beside the queue, as written.
      for (const id of waiting) expect(await queue.ledger.find(id), id).toBeDefined();
      const { store: counting, reads: readsMade } = countingReads(store);
      // Every command naming this case's keys on every master while the sweep runs.
      const monitors = await Promise.all(client.nodes("master").map((node) => node.monitor()));
      let commands = 0;
      let indexRanges = 0;
      for (const monitor of monitors)
        monitor.on("monitor", (_time: string, args: string[]) => {
          if (!args.some((arg) => arg.includes("sweep-cost"))) return;
          // The lanes index has one shard per hash slot, each read once a sweep (pipelined per master).
          if (/^zrevrangebyscore$/i.test(args[0]!) && args[1]!.endsWith(":lanes")) indexRanges++;
          else commands++;
        });
      await sleep(100);
      const sweepStarted = performance.now();
      const result = await sweepQueued({ queue, store: counting, olderThanMs: 0 });
      const sweepMs = Math.round(performance.now() - sweepStarted);
      await sleep(100);
      for (const monitor of monitors) monitor.disconnect();
      console.log(
        `one cluster sweep of ${waiting.length} waiting copies in ${sweepMs} ms: ${commands} Redis commands over 3 masters besides ${indexRanges} lane index shards, ${readsMade()} record reads`,
      );
      expect(result).toMatchObject({ requeued: 0, dropped: 0 });
      expect(result.checked).toBeGreaterThanOrEqual(waiting.length);
      expect(readsMade()).toBe(0);
      expect(commands).toBeLessThan(waiting.length / 2);
      expect(indexRanges).toBeLessThanOrEqual(16_384);
      release();
      await eventually(
        async () =>
          // `ordering: true` keys a lane by merchant and subscription.
          (await Promise.all(lane.map((n) => store.get({ id: n.id, order: { key: `M-1:${n.resource.id}` } })))).every(
            (record) => record?.state === "completed",
          ),
        30_000,
        "the lane to drain",
      );
      expect(started).toEqual(lane.map((n) => n.id));
    } finally {
      release();
      await worker.close({ timeoutMs: 2_000 });
      await receiver.close();
      await queue.close();
      await store.close();
    }
  }, 60_000);

  it("finds lanes whose drain jobs were lost from the store's side, in every slot: one sweep, each notification once, in order", async () => {
    const client: Cluster = await cluster!.client();
    const storePrefix = "lane-lost:";
    const queuePrefix = "{lane-lost}";
    const effects = "lane-lost-effects:";
    const store = redisStore({ connection: client, prefix: storePrefix });
    const queue = bullmqQueue({ connection: client, name: "lanes", prefix: queuePrefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    // 30 subscriptions, so their lanes (and lanes indexes) sit in slots on every master; 3 each.
    const lanes = Array.from({ length: 30 }, (_, i) => backlog(`lane-lost-${i}`, 3));
    for (const lane of lanes) await sendAll(receiver, lane);
    // The fault: every drain job gone, and every copy of the lanes' notifications beside the queue.
    for (const lane of lanes) expect(await queue.queue.remove(jobIdFor(lane[0]!.id))).toBe(1);
    for (const lane of lanes) for (const n of lane) await queue.ledger.forget(n.id);
    for (const lane of lanes) for (const n of lane) expect(await queue.ledger.find(n.id)).toBeUndefined();

    const swept = await sweepQueued({ queue, store, olderThanMs: 0 });
    expect(swept).toMatchObject({ requeued: lanes.length, lanes: lanes.length });
    expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: lanes.length });
    const worker = createWorker({
      connection: client,
      name: "lanes",
      prefix: queuePrefix,
      idempotency: store,
      logger: silentLogger(),
      sweepQueuedEveryMs: 0,
      ...recordingHandlers(client as never, effects),
    });
    try {
      await eventually(
        async () => {
          const calls = await Promise.all(
            lanes.map((lane) => readCalls(client as never, effects, lane[0]!.resource.id!)),
          );
          return calls.every((made) => made.length === 3);
        },
        30_000,
        "every notification run",
      );
      for (const lane of lanes) {
        const calls = await readCalls(client as never, effects, lane[0]!.resource.id!);
        expect(calls.map((call) => call.id)).toEqual(lane.map((n) => n.id));
      }
      const { stale } = await expectEachSubscriptionInOrder(client as never, effects, lanes.flat());
      expect(stale).toBe(0);
      // Drained, every lane is found empty and leaves its index: nothing more to wake.
      expect((await sweepQueued({ queue, store, olderThanMs: 0 })).requeued).toBe(0);
    } finally {
      await worker.close({ timeoutMs: 2_000 });
      await receiver.close();
      await queue.close();
      await store.close();
    }
  }, 120_000);
});
