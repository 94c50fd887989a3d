import { type Cluster, Redis } from "ioredis";
import { createReceiver, inProcessQueue, type Receiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { readRedisStream, redisStore, redisStreamRecorder } from "merchant-webhooks/redis";
import { buildNotification, replay } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually } from "../support/redis.js";
import { clusterForFile, shuffled } from "./fixtures/cluster-suite.js";

const cluster = await clusterForFile("test/cluster/store-and-recorder.test.ts");
const headers = { "content-type": "application/json" };
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const renewals = (count: number) =>
  Array.from({ length: count }, () => buildNotification("SUBSCRIPTION_RENEW", undefined, { random: true }));

/**
 * The status of a delivery to `receiver`, sent again on 503 only: a store call may overrun its 500 ms
 * limit on a saturated machine, and a sender would simply retry.
 */
async function statusPast503(receiver: Receiver, notification: unknown): Promise<number> {
  for (let tries = 1; ; tries++) {
    const { status } = await receiver.handle({ method: "POST", headers, rawBody: json(notification) });
    if (status !== 503 || tries === 10) return status;
  }
}

/** How many keys starting with `prefix` each master holds. */
async function keysPerMaster(client: Cluster, prefix: string): Promise<number[]> {
  return Promise.all(
    client.nodes("master").map(async (node) => {
      let count = 0;
      let cursor = "0";
      do {
        const [next, keys] = await node.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
        cursor = next;
        // Records only: the console's time index and its filters' sets sit beside them, in each slot
        // that holds a record (`{tag}:time-index`, `{tag}:state:…`, `{tag}:type:…`, `{tag}:sub:…`).
        count += keys.filter((key) => !/\}:(time-index$|state:|type:|sub:)/.test(key)).length;
      } while (cursor !== "0");
      return count;
    }),
  );
}

describe.skipIf(!cluster)("on a Redis Cluster of 3 masters and 3 replicas", () => {
  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);

  it("receiver.health(): the store and the queue answer their pings on the cluster", async () => {
    const client = await cluster!.client();
    const store = redisStore({ connection: client, prefix: "health-test:" });
    const queue = bullmqQueue({ connection: client, name: "health-test", prefix: "{mw}" });
    const receiver = createReceiver({ idempotency: store, queue, logger: silentLogger() });
    expect(await receiver.health()).toEqual({
      ok: true,
      store: "up",
      queue: "up",
      storeAddress: expect.stringMatching(/^cluster 127\.0\.0\.1:\d+/),
      inFlight: 0,
      maxInFlight: 1000,
    });
    await receiver.close();
  });

  it("every Redis-backed part takes the cluster's startup nodes as `connection`", async () => {
    const nodes = cluster!.startupNodes;
    const store = redisStore({ connection: nodes, prefix: "nodes-test:" });
    const queue = bullmqQueue({ connection: nodes, name: "nodes-test", prefix: "{mw}" });
    const stream = "nodes-test:recording";
    const record = redisStreamRecorder({ connection: nodes, stream });
    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: store, record, logger: silentLogger(), onRenew });
    expect(await receiver.health()).toEqual({
      ok: true,
      store: "up",
      queue: "none",
      storeAddress: expect.stringMatching(/^cluster 127\.0\.0\.1:\d+/),
      inFlight: 0,
      maxInFlight: 1000,
    });
    const notification = renewals(1)[0]!;
    expect(await statusPast503(receiver, notification)).toBe(200);
    await receiver.close(); // closes the recorder, which made its own connection
    expect(onRenew).toHaveBeenCalledOnce();
    expect(await queue.ping()).toBeUndefined();
    await queue.close();
    await store.close();

    const entries = await readRedisStream({ connection: nodes, stream });
    expect(entries.map((entry) => entry.notification.id)).toEqual([notification.id]);
    expect(() => bullmqQueue({ connection: nodes, name: "nodes-test" })).toThrow(/hash tag/);
  });

  it("redisStore: 200 notifications delivered twice, shuffled, run their handler once each, records spread over all masters", async () => {
    const client = await cluster!.client();
    const prefix = "store-test:";
    const store = redisStore({ connection: client, prefix });
    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: store, logger: silentLogger(), onRenew });
    const notifications = renewals(200);
    const deliveries = shuffled([...notifications, ...notifications]);

    // 16 in flight.
    const statuses: number[] = [];
    let next = 0;
    const lane = async () => {
      while (next < deliveries.length) {
        statuses.push(await statusPast503(receiver, deliveries[next++]));
      }
    };
    await Promise.all(Array.from({ length: 16 }, lane));
    await receiver.close();

    // A redelivery racing its first delivery meets the live claim (409); every other answer is 200.
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const runs = new Map<string, number>();
    for (const [notification] of onRenew.mock.calls) runs.set(notification.id, (runs.get(notification.id) ?? 0) + 1);
    expect(runs.size).toBe(200);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    for (const notification of notifications.slice(0, 20))
      expect((await store.get(notification.id))?.state).toBe("completed");

    const spread = await keysPerMaster(client, prefix);
    console.log(`records per master: ${spread.join(", ")}`);
    expect(spread).toHaveLength(3);
    expect(spread.reduce((a, b) => a + b, 0)).toBe(200);
    // Each master holds a share: a hash tag in the prefix would have put all 200 on one.
    for (const count of spread) expect(count).toBeGreaterThan(20);
  });

  it("redisStore with waitForReplicas: every write is followed by a WAIT on the master that took it, on the same connection", async () => {
    const client = await cluster!.client();
    const masters = client.nodes("master");
    // What each master is asked, in order, per client connection.
    const asked = new Map<number, Array<{ source: string; command: string }>>();
    const monitors = await Promise.all(
      masters.map(async (node) => {
        const port = node.options.port!;
        asked.set(port, []);
        const monitor = await new Redis({ port, host: "127.0.0.1" }).monitor();
        monitor.on("monitor", (_time: string, args: string[], source: string) =>
          asked.get(port)!.push({ source, command: String(args[0]).toLowerCase() }),
        );
        return monitor;
      }),
    );
    const store = redisStore({ connection: client, prefix: "wait-test:", waitForReplicas: { replicas: 1 } });
    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: store, logger: silentLogger(), onRenew });
    const notifications = renewals(30);
    const statuses = await Promise.all(notifications.map((n) => statusPast503(receiver, n)));
    await receiver.close();
    await store.close();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the monitors' last lines
    for (const monitor of monitors) monitor.disconnect();

    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(onRenew).toHaveBeenCalledTimes(30);
    let writes = 0;
    for (const [port, commands] of asked) {
      for (let i = 0; i < commands.length; i++) {
        const { command, source } = commands[i]!;
        if (command === "wait") {
          // The command this connection sent this master just before: a write the WAIT confirms.
          const before = commands.slice(0, i).findLast((other) => other.source === source);
          expect(before?.command, `a WAIT on master ${port} with no write before it`).toMatch(/^evalsha$|^eval$/);
        } else if (command === "evalsha" || command === "eval") {
          writes++;
          const after = commands.slice(i + 1).find((other) => other.source === source && other.command === "wait");
          expect(after, `a write on master ${port} that no WAIT followed`).toBeDefined();
        }
      }
    }
    expect(writes).toBeGreaterThanOrEqual(60); // a claim and a completion each
  });

  it("redisStreamRecorder: records on the cluster, and the records replay into fresh handlers", async () => {
    const client = await cluster!.client();
    const stream = "recording-test:stream";
    const receiver = createReceiver({
      logger: silentLogger(),
      onRenew: () => {},
      record: redisStreamRecorder({ connection: client, stream }),
    });
    const notifications = renewals(20);
    for (const notification of notifications) {
      expect((await receiver.handle({ method: "POST", headers, rawBody: json(notification) })).status).toBe(200);
    }
    await receiver.close(); // waits for the recordings to be written

    // Recordings are written in the background, so their order is the order the writes landed.
    const ids = notifications.map((notification) => notification.id).sort();
    const entries = await readRedisStream({ connection: client, stream });
    expect(entries.map((entry) => entry.notification.id).sort()).toEqual(ids);
    const fresh = vi.fn();
    const results = await replay({ onRenew: fresh }, entries);
    expect(results.map((result) => result.status)).toEqual(notifications.map(() => 200));
    expect(fresh.mock.calls.map(([notification]) => notification.id).sort()).toEqual(ids);
  });

  it("bullmqQueue and createWorker with prefix {mw}: queued notifications run once each in the worker", async () => {
    const client = await cluster!.client();
    const store = redisStore({ connection: client, prefix: "queue-test:" });
    const queue = bullmqQueue({ connection: client, name: "queue-test", prefix: "{mw}" });
    const onRenew = vi.fn();
    const worker = createWorker({
      connection: client,
      name: "queue-test",
      prefix: "{mw}",
      idempotency: store,
      logger: silentLogger(),
      onRenew,
    });
    await worker.waitUntilReady();
    const receiver = createReceiver({ idempotency: store, queue, logger: silentLogger() });
    const notifications = renewals(30);
    for (const notification of [...notifications, ...notifications]) {
      expect(await statusPast503(receiver, notification)).toBe(200);
    }
    await eventually(() => onRenew.mock.calls.length >= 30, 20_000, "30 handler runs");
    await receiver.close();
    await worker.close();
    expect(new Set(onRenew.mock.calls.map(([notification]) => notification.id)).size).toBe(30);
    expect(onRenew).toHaveBeenCalledTimes(30);
    // Every key of the queue is in the slot of {mw}.
    const queueKeys = await keysPerMaster(client, "{mw}");
    expect(queueKeys.filter((count) => count > 0)).toHaveLength(1);
  });

  it("redisStore with an in-process queue: lapsed kept claims in every master's slots are found by the kept index and run once each", async () => {
    const client = await cluster!.client();
    const store = redisStore({ connection: client, prefix: "kept-test:" });
    const carrier = inProcessQueue();
    const notifications = renewals(40);
    // Accepted by a receiver that died: each claim keeps its data, and its lease has lapsed.
    for (const notification of notifications) {
      const carried = carrier.carry!({
        id: notification.id,
        fingerprint: `fp-${notification.id}`,
        notification,
        headers: {},
        receivedAt: Date.now(),
        owner: "gone",
      });
      const claimed = await store.claim({ id: notification.id, fingerprint: "f", owner: "gone", leaseMs: 1, carried });
      expect(claimed).toMatchObject({ status: "claimed", kept: true });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await store.kept!.lapsed(100)).sort()).toEqual(notifications.map((n) => n.id).sort());
    // The kept index lives in each record's own slot, on every master.
    const indexes = await Promise.all(
      client.nodes("master").map(async (node) => (await node.keys("kept-test:{*}:kept")).length),
    );
    expect(indexes.filter((count) => count > 0)).toHaveLength(3);

    const onRenew = vi.fn();
    const receiver = createReceiver({ idempotency: store, logger: silentLogger(), queue: inProcessQueue(), onRenew });
    try {
      await eventually(
        async () => onRenew.mock.calls.length >= notifications.length,
        20_000,
        "every kept notification run",
      );
      await eventually(
        async () => (await store.get(notifications.at(-1)!.id))?.state === "completed",
        5_000,
        "completed",
      );
    } finally {
      await receiver.close();
    }
    expect(onRenew).toHaveBeenCalledTimes(notifications.length);
    expect(await store.kept!.lapsed(100)).toEqual([]);
    await store.close();
  });
});
