import { Redis } from "ioredis";
import type { IdempotencyStore, NotificationQueue } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { consoleHandler } from "merchant-webhooks/console";
import { pgBossQueue } from "merchant-webhooks/pg-boss";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli.js";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { bedWorker } from "../pg-boss/fixtures/lane.js";
import { silentLogger } from "../support/capture-logger.js";
import { deliverUntilAccepted, notification } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { consoleSession, readable } from "./console-session.js";
import { consoleOver } from "./rig.js";

const LANE = 4;

/** What a lane's handlers saw: each run in order, stale ones apart; failing while `broken`. */
function laneHandlers() {
  const runs: string[] = [];
  const stale: string[] = [];
  const broken = { value: true };
  const handler = async (n: { id: string }) => {
    if (broken.value) throw new Error("ledger refused");
    // A run that takes a while: the newer ones' jobs come while the subscription is held by it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    runs.push(n.id);
  };
  const onStale = async (n: { id: string }) => {
    stale.push(n.id);
  };
  return { runs, stale, broken, handler, onStale };
}

/**
 * Four notifications of one subscription fail for good; once fixed, "Redrive all 4" from the dead
 * letters page (filtered by the subscription), or the CLI's `redrive` (`cli`, its arguments), runs
 * each once, oldest first, none stale.
 */
async function redriveLane(
  store: IdempotencyStore,
  queue: NotificationQueue,
  lane: ReturnType<typeof laneHandlers>,
  label: string,
  cli?: readonly string[],
) {
  const { receiver, admin } = consoleOver(store, queue);
  const subscription = `SUB-B-${label}-${process.pid}`;
  const sent = Array.from({ length: LANE }, (_, i) => {
    const body = notification("SUBSCRIPTION_RENEW", `WH-lane-${label}-${process.pid}-${i}`);
    body.resource.id = subscription;
    body.resource.update_time = new Date(Date.UTC(2026, 10, 1, 8, i)).toISOString();
    return body;
  });
  let redrivenAt = 0;
  try {
    for (const body of sent) await deliverUntilAccepted(receiver, body, 50);
    const failed = async () =>
      (await admin.listNotifications({ state: "failed", subscriptionId: subscription })).items.length;
    await eventually(async () => (await failed()) === LANE, 30_000, "the lane's four dead letters");

    if (cli) {
      // The CLI's `redrive` of the queue's whole failed set, as an operator runs it once the cause is fixed.
      lane.broken.value = false;
      redrivenAt = Date.now();
      const run = await runCli(cli);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      // It lists them in the order they go back: oldest first.
      expect(run.stdout.match(/^redriven: .*$/gm)).toEqual(sent.map((body) => `redriven: ${body.id}`));
    } else {
      const ops = consoleSession(
        consoleHandler({ admin, authorize: (request) => request.headers.get("authorization") === "Bearer ops" }),
      );
      await ops.get(`/console/dead-letters?subscriptionId=${subscription}`);
      const counted = await ops.post("/console/actions/redrive", [
        ["mode", "dry-run"],
        ["subscriptionId", subscription],
      ]);
      expect(readable(counted.text)).toContain(`Redrive all ${LANE}`);

      lane.broken.value = false;
      redrivenAt = Date.now();
      const done = await ops.post("/console/actions/redrive", [
        ["mode", "filter"],
        ["state", "failed"],
        ["subscriptionId", subscription],
      ]);
      expect(readable(done.text)).toContain(`redriven ${LANE} of ${LANE} matching`);
    }
    await eventually(
      async () =>
        (await admin.listNotifications({ state: "completed", subscriptionId: subscription })).items.length === LANE,
      30_000,
      "the lane to complete",
    );
    // The newer ones wait for the oldest to run, not for a lease (30 s) to run out.
    const drainMs = Date.now() - redrivenAt;
    console.log(
      `ordered bulk redrive (${label}, ${cli ? "CLI" : "console"}): ${LANE} completed ${drainMs} ms after it`,
    );
    expect(drainMs).toBeLessThan(10_000);
    expect(lane.runs).toEqual(sent.map((body) => body.id));
    expect(lane.stale).toEqual([]);
  } finally {
    await receiver.close();
  }
}

describe.each(["the console", "the CLI"] as const)(
  "an ordered subscription's dead letters redriven in bulk by %s",
  (by) => {
    const name = by === "the CLI" ? "lane-cli" : "lane";
    it("on BullMQ and Redis: each runs once, oldest first, none stale", async () => {
      const prefix = uniquePrefix("console-lane");
      const redis = new Redis(REDIS_URL);
      const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
      const queue = bullmqQueue({ connection: REDIS_URL, name, prefix, jobOptions: { attempts: 1 } });
      const lane = laneHandlers();
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger: silentLogger(),
        concurrency: 4,
        onRenew: lane.handler,
        onStale: lane.onStale,
      });
      const cli = ["redrive", "--queue", name, "--redis", REDIS_URL, "--prefix", prefix];
      try {
        await redriveLane(store, queue, lane, `bullmq-${name}`, by === "the CLI" ? cli : undefined);
      } finally {
        await worker.close({ timeoutMs: 2_000 });
        await queue.close();
        await store.close();
        await removeKeys(redis, prefix);
        redis.disconnect();
      }
    }, 90_000);

    describe("on pg-boss and PostgreSQL", () => {
      const bed = pgBossBed("pgblane", () => "");
      const stops: Array<() => Promise<unknown>> = [];
      afterAll(async () => {
        for (const stop of stops) await stop();
      });

      it("each runs once, oldest first, none stale", async () => {
        const queue = pgBossQueue({
          boss: bed.boss,
          name,
          schema: bed.bossSchema,
          jobOptions: { retryLimit: 0 },
        });
        const lane = laneHandlers();
        const worker = bedWorker(bed, name, { concurrency: 4, onRenew: lane.handler, onStale: lane.onStale });
        stops.push(() => worker.close({ timeoutMs: 2_000 }));
        const cli = ["redrive", "--pg-boss", DATABASE_URL, "--schema", bed.bossSchema, "--queue", name];
        await redriveLane(bed.store, queue, lane, `pgboss-${name}`, by === "the CLI" ? cli : undefined);
      }, 90_000);
    });
  },
);
