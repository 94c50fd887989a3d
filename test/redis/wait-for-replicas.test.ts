import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { type RedisStore, redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectEachSubscriptionInOrder, recordingHandlers } from "../ordering/fixtures/recorded-calls.js";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, startRedisServer } from "../support/redis.js";

const answer = (response: { status: number; body: string }) => ({
  status: response.status,
  ...(JSON.parse(response.body) as { processed: boolean; message: string }),
});

type Server = Awaited<ReturnType<typeof startRedisServer>>;

/** A master with one replica of its own, so the replica can be paused without touching the shared Redis. */
describe("redisStore with waitForReplicas, on a master and its replica", () => {
  let master: Server;
  let replica: Server;
  let masterClient: Redis;
  let replicaClient: Redis;
  const stores: RedisStore[] = [];
  const storeOn = (options: { waitForReplicas?: { replicas: number; timeoutMs?: number } } = {}) => {
    const store = redisStore({ connection: master.url, prefix: "idem:", ...options });
    stores.push(store);
    return store;
  };
  const replicaLinked = async () =>
    /master_link_status:up/.test(await replicaClient.info("replication")) &&
    /slave0:.*state=online/.test(await masterClient.info("replication"));

  beforeAll(async () => {
    master = await startRedisServer();
    replica = await startRedisServer(["--replicaof", "127.0.0.1", String(master.port)]);
    masterClient = new Redis(master.url);
    replicaClient = new Redis(replica.url);
    await eventually(replicaLinked, 15_000, "the replica to follow its master");
  }, 30_000);
  afterAll(async () => {
    if (replica?.process.signalCode === null) replica.process.kill("SIGCONT");
    for (const store of stores) await store.close();
    masterClient?.disconnect();
    replicaClient?.disconnect();
    await replica?.stop();
    await master?.stop();
  });

  it("refuses settings it cannot honour, at construction, saying what is expected", () => {
    expect(() => storeOn({ waitForReplicas: { replicas: 0 } })).toThrow(
      /waitForReplicas.replicas must be .* 1 or more; got 0/,
    );
    expect(() => storeOn({ waitForReplicas: { replicas: 1, timeoutMs: 500 } })).toThrow(
      /waitForReplicas.timeoutMs must be .* below the store's timeoutMs \(500\); got 500/,
    );
  });

  it("processes a notification once, its completed record already on the replica when the answer is sent", async () => {
    let calls = 0;
    const store = storeOn({ waitForReplicas: { replicas: 1 } });
    const receiver = createReceiver({
      logger: captureLogger().logger,
      idempotency: store,
      onRenew: () => void calls++,
    });
    const waitsBefore = Number(/cmdstat_wait:calls=(\d+)/.exec(await masterClient.info("commandstats"))?.[1] ?? 0);
    const renewal = notification();
    expect(answer(await receiver.handle(post(renewal)))).toEqual({
      status: 200,
      processed: true,
      message: "processed",
    });
    // Read from the replica at once: the completion was confirmed there before the answer.
    expect(await replicaClient.hget(`idem:${renewal.id}`, "state")).toBe("completed");
    const waitsAfter = Number(/cmdstat_wait:calls=(\d+)/.exec(await masterClient.info("commandstats"))?.[1] ?? 0);
    expect(waitsAfter - waitsBefore).toBeGreaterThanOrEqual(2); // the claim's and the completion's
    expect(calls).toBe(1);
    await receiver.close();
  });

  it("runs one subscription's queued notifications once each, in position order, through workers whose store waits too", async () => {
    const store = storeOn({ waitForReplicas: { replicas: 1 } });
    const queue = bullmqQueue({ connection: master.url, name: "ordered", prefix: "{q}" });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const notifications = Array.from({ length: 30 }, (_, i) =>
      buildNotification("SUBSCRIPTION_RENEW", {
        id: `WH-replica-${i}`,
        resource: {
          merchant_id: "M-1",
          id: "SUB-replica",
          update_time: new Date(Date.UTC(2026, 2, 1, 0, 0, i)).toISOString(),
        },
      }),
    );
    for (const n of notifications) expect((await receiver.handle(post(n))).status).toBe(200);
    const workers = [0, 1].map(() =>
      createWorker({
        connection: master.url,
        name: "ordered",
        prefix: "{q}",
        idempotency: store,
        logger: silentLogger(),
        concurrency: 5,
        ...recordingHandlers(masterClient, "effects:"),
      }),
    );
    await eventually(
      async () => (await masterClient.llen("effects:calls:SUB-replica")) === 30,
      20_000,
      "all 30 to run",
    );
    await Promise.all(workers.map((worker) => worker.close({ timeoutMs: 5_000 })));
    await receiver.close();
    const { stale } = await expectEachSubscriptionInOrder(masterClient, "effects:", notifications);
    expect(stale).toBe(0);
    // Every record is completed on the replica too.
    const states = await Promise.all(
      notifications.map((n) => replicaClient.hget(`idem:{M-1:SUB-replica}:n:${n.id}`, "state")),
    );
    expect(states.every((state) => state === "completed")).toBe(true);
  }, 40_000);

  it("answers 503 without running the handler while the replica cannot confirm, then runs it once when it can", async () => {
    let calls = 0;
    const log = captureLogger();
    const waiting = createReceiver({
      logger: log.logger,
      idempotency: storeOn({ waitForReplicas: { replicas: 1, timeoutMs: 50 } }),
      onRenew: () => void calls++,
    });
    const notWaiting = createReceiver({ logger: captureLogger().logger, idempotency: storeOn(), onRenew: () => {} });
    const renewal = notification();
    replica.process.kill("SIGSTOP");
    try {
      const refused = answer(await waiting.handle(post(renewal)));
      expect(refused).toMatchObject({ status: 503, processed: false });
      expect(calls).toBe(0);
      expect(log.text()).toMatch(/written to 0 of 1 replicas within 50 ms/);
      // The same write without the option is acted on at once: the option is what holds it back.
      expect(answer(await notWaiting.handle(post(notification()))).status).toBe(200);
    } finally {
      replica.process.kill("SIGCONT");
    }
    await eventually(replicaLinked, 15_000, "the replica to catch up");
    // The unconfirmed claim was let go at once: the sender's retry runs the handler, once.
    const retried = await eventually(async () => {
      const response = answer(await waiting.handle(post(renewal)));
      return response.status === 200 ? response : undefined;
    }, 10_000);
    expect(retried).toEqual({ status: 200, processed: true, message: "processed" });
    expect(calls).toBe(1);
    await waiting.close();
    await notWaiting.close();
  }, 40_000);
});
