import { type ChildProcess, fork } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { bullmqQueue } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCRIPTS as QUEUE_SCRIPTS } from "../../src/bullmq/lua/scripts.generated.js";
import { SCRIPTS as STORE_SCRIPTS } from "../../src/redis/lua/scripts.generated.js";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, type OwnRedisServer, ownRedisServer } from "../support/redis.js";

/**
 * The Redis commands a receiver and two worker processes send per queued notification, counted with
 * MONITOR on a redis-server of the test's own (a shared one would show other clients' commands). Each
 * command a client sends counts, however cheap: a script's own calls do not (they are one command),
 * nor the handler's write, nor this test's reads. The workers connect paused, so connecting is not
 * counted; the receiver queues the whole backlog before the workers start, as a busy subscription's
 * backlog builds up.
 */
const COUNTED = 100;
const workerScript = fileURLToPath(new URL("../bullmq/fixtures/worker-process.ts", import.meta.url));
const encoder = new TextEncoder();
const base = buildNotification("SUBSCRIPTION_RENEW");

/** A script's name by its SHA-1, to say which scripts the counts are made of when a bound is missed. */
const scriptNames = new Map(
  Object.entries({ ...STORE_SCRIPTS, ...QUEUE_SCRIPTS }).map(([name, body]) => [
    createHash("sha1").update(body).digest("hex"),
    name,
  ]),
);

type Shape = "ordered, one subscription" | "ordered, one per subscription" | "unordered";
type Side = "receiver" | "workers";
type Count = { total: number; by: Record<string, number> };

describe("Redis commands per queued notification (MONITOR, 1 receiver, 2 worker processes)", () => {
  let server: OwnRedisServer;
  let redis: Redis;
  const measured: Partial<Record<Shape, Record<Side, number>>> = {};

  beforeAll(async () => {
    server = await ownRedisServer();
    redis = new Redis(server.url);
  });

  afterAll(async () => {
    console.info(`commands per notification: ${JSON.stringify(measured)}`);
    redis?.disconnect();
    await server?.stop();
  });

  /** Send `COUNTED` notifications through a receiver, then drain them with two workers, counting commands. */
  async function count(shape: Shape): Promise<Record<Side, Count>> {
    const run = `cpn-${shape.replace(/\W+/g, "-")}`;
    const storePrefix = `{${run}}idem:`;
    const prefix = `{${run}}`;
    const effects = `{${run}}effects`;
    const ordered = shape !== "unordered";
    const store = redisStore({ connection: server.url, prefix: storePrefix });
    const queue = bullmqQueue({ connection: server.url, name: "counted", prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, ordering: ordered });
    const env = {
      REDIS_URL: server.url,
      QUEUE: "counted",
      PREFIX: prefix,
      STORE_PREFIX: storePrefix,
      EFFECTS: effects,
      EFFECTS_LIST: "1",
      PAUSED: "1",
      CONCURRENCY: "20",
    };
    const workers = await Promise.all([startWorker(env), startWorker(env)]);
    // Connected before counting starts, as a receiver that has been up a while is.
    await Promise.all([queue.ping(), store.get(`${run}-warm-up`)]);

    const own = /addr=(\S+)/.exec(String(await redis.client("INFO")))![1]!;
    const counts: Record<Side, Count> = { receiver: { total: 0, by: {} }, workers: { total: 0, by: {} } };
    let side: Side = "receiver";
    const monitor = await redis.monitor();
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      const name = String(args[0]).toLowerCase();
      if (source === own) {
        if (name === "echo" && args[1] === `${run}:drain`) side = "workers";
        return;
      }
      if (source === "lua" || args.includes(effects)) return;
      const label = name.startsWith("eval")
        ? `${name} ${scriptNames.get(String(args[1])) ?? keyShape(args, run)}`
        : name;
      counts[side].total++;
      counts[side].by[label] = (counts[side].by[label] ?? 0) + 1;
    });
    try {
      for (let i = 0; i < COUNTED; i++) {
        const subscription = shape === "ordered, one subscription" ? `SUB-${run}` : `SUB-${run}-${i}`;
        const update_time = new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString();
        const body = { ...base, id: `${run}-${i}`, resource: { ...base.resource, id: subscription, update_time } };
        const response = await receiver.handle({
          method: "POST",
          headers: { "content-type": "application/json" },
          rawBody: encoder.encode(JSON.stringify(body)),
        });
        expect(response.status, body.id).toBe(200);
      }
      await redis.echo(`${run}:drain`);
      for (const worker of workers) worker.send("go");
      await eventually(async () => (await redis.llen(effects)) >= COUNTED, 60_000, "every notification run");
      // What follows a run (a copy dropped, a job removed) is sent within moments of it.
      await eventually(
        async () => {
          const jobs = await queue.queue.getJobCounts("waiting", "delayed", "active", "failed");
          return Object.values(jobs).every((n) => n === 0);
        },
        30_000,
        "the queue to empty",
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      monitor.disconnect();
      await Promise.all(workers.map(closeWorker));
      await receiver.close();
      await store.close();
      await queue.close();
    }
    const ran = await redis.lrange(effects, 0, -1);
    // Every notification ran once and none was stale; ordered on one subscription, in position order.
    expect(new Set(ran).size).toBe(COUNTED);
    expect(ran).toHaveLength(COUNTED);
    expect(ran.filter((id) => id.startsWith("stale:"))).toEqual([]);
    if (shape === "ordered, one subscription") expect(ran).toEqual(ran.map((_, i) => `${run}-${i}`));
    measured[shape] = { receiver: perNotification(counts.receiver), workers: perNotification(counts.workers) };
    return counts;
  }

  const perNotification = (count: Count) => Math.round((count.total / COUNTED) * 100) / 100;
  const detail = (counts: Record<Side, Count>) => JSON.stringify(counts);

  it("ordered with one notification per subscription: no more than unordered, but for the order binding", async () => {
    const unordered = await count("unordered");
    const ordered = await count("ordered, one per subscription");
    const total = (counts: Record<Side, Count>) => counts.receiver.total + counts.workers.total;
    // The receiver's binding of the id to its subscription (`order-binding.ts`) is a script of its own: on
    // a cluster its key is in another slot than the lane's. It is the one command an ordered notification
    // has more than an unordered one.
    expect(total(ordered), `${detail(ordered)} against ${detail(unordered)}`).toBeLessThanOrEqual(
      total(unordered) + COUNTED,
    );
  }, 180_000);

  // The lane keeps each waiter's data, and the sweep finds a lane whose drain job was lost from the
  // store's side (its lanes index, written by the append's own script): no waiter writes a copy
  // beside the queue, so a busy subscription's notification costs the lane's own commands alone.
  it("ordered on one busy subscription: at most 4 per notification, receiver and workers together", async () => {
    const counts = await count("ordered, one subscription");
    expect(counts.receiver.total + counts.workers.total, detail(counts)).toBeLessThanOrEqual(4 * COUNTED);
  }, 180_000);
});

/** An unknown script named by its first key, with the run's prefix and the ids in it left out. */
function keyShape(args: string[], run: string): string {
  const key = String(args[3] ?? "");
  return key.replaceAll(`{${run}}`, "").replace(/[0-9]+/g, "#");
}

/** A worker process (`../bullmq/fixtures/worker-process.ts`, PAUSED), connected and paused until it is sent "go". */
function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = fork(workerScript, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("message", () => resolve(child));
    child.once("exit", (code) => reject(new Error(`worker process exited with ${code} before it was ready`)));
  });
}

/** Ask a worker process to close, and wait until it has exited (killed if it has not within 10 s). */
async function closeWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.send("close");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}
