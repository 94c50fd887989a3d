import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backlog, post, sendAll } from "../ordering/fixtures/mailbox.js";
import { silentLogger } from "../support/capture-logger.js";
import { type OwnRedisServer, ownRedisServer } from "../support/redis.js";

/**
 * Issue 41 counted 12.1 Redis commands per ordered notification delivered twice, against 5.2 once: a
 * second delivery of a notification waiting in its lane was claimed again. Counted here with MONITOR on
 * a redis-server of the test's own: the receiver's commands for 18 waiters of one subscription, first
 * delivered, then each delivered again while it still waits (a script's own calls do not count).
 */
describe("Redis commands for a waiting notification delivered again (MONITOR)", () => {
  let server: OwnRedisServer;
  let redis: Redis;
  beforeAll(async () => {
    server = await ownRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  it("a second delivery costs no more commands than the first, and queues nothing", async () => {
    const store = redisStore({ connection: server.url, prefix: "{dup}idem:" });
    const queue = bullmqQueue({ connection: server.url, name: "dup", prefix: "{dup}" });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: true });
    const lane = backlog("dup-count", 20);
    // The first two: one holds the lane's drain job, the next waits; both connect the clients.
    await sendAll(receiver, lane.slice(0, 2));
    const waiters = lane.slice(2);
    const own = /addr=(\S+)/.exec(String(await redis.client("INFO")))![1]!;
    const counts = { first: 0, again: 0, closing: 0 };
    let phase: keyof typeof counts = "first";
    const monitor = await redis.monitor();
    monitor.on("monitor", (_time: string, _args: string[], source: string) => {
      if (source !== "lua" && source !== own) counts[phase]++;
    });
    try {
      await sendAll(receiver, waiters);
      await redis.echo("sync");
      const jobs = await queue.queue.getJobCounts("waiting");
      phase = "again";
      for (const body of waiters) {
        const response = await receiver.handle(post(body));
        expect(response.answer).toEqual({ processed: true, message: "already processed" });
      }
      await redis.echo("sync");
      // The close's own commands (its QUIT) are not a delivery's.
      phase = "closing";
      expect(await queue.queue.getJobCounts("waiting")).toEqual(jobs);
    } finally {
      monitor.disconnect();
      await receiver.close();
      await queue.close();
      await store.close();
    }
    const per = { first: counts.first / waiters.length, again: counts.again / waiters.length };
    console.info(`receiver commands per waiting notification: ${JSON.stringify(per)}`);
    // Answered from its record, a duplicate costs the order binding and one claim script, as a first
    // delivery into a lane now does on one Redis (its data in the lane, no copy beside the queue): no
    // more than the first, but for one command in the batch that is no delivery's (seen in some runs).
    // Claimed again, as issue 41 found, it re-appended and a worker ran it once more (12.1 against 5.2).
    expect(per.again, JSON.stringify(per)).toBeLessThanOrEqual(per.first + 1 / waiters.length);
  }, 60_000);
});
