import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { redrive } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { eventually, ownRedisServer, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** Every key under `prefix` with its serialized value: equal snapshots mean nothing was written. */
async function snapshot(redis: Redis, prefix: string): Promise<Map<string, string>> {
  const keys = await redis.keys(`${prefix}*`);
  const values = await Promise.all(keys.map((key) => redis.dumpBuffer(key)));
  return new Map(keys.map((key, i) => [key, values[i]!.toString("base64")]));
}

/** The commands Redis receives that name `prefix`, as MONITOR reports them. */
async function monitorCommands(url: string, prefix: string) {
  const monitor = await new Redis(url).monitor();
  const seen: string[][] = [];
  monitor.on("monitor", (_time: string, args: string[]) => {
    if (args.some((arg) => arg.includes(prefix))) seen.push(args);
  });
  return { seen, stop: () => monitor.disconnect() };
}

// Commands that change data, as BullMQ's queue start-up would send them outside a script.
const WRITES = new Set([
  "hset",
  "hmset",
  "hsetnx",
  "set",
  "del",
  "unlink",
  "zadd",
  "zrem",
  "lpush",
  "rpush",
  "lrem",
  "xadd",
  "expire",
  "pexpire",
]);

describe("redrive --dry-run", () => {
  const redis = new Redis(REDIS_URL);
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("creates no key for a queue that does not exist", async () => {
    const prefix = uniquePrefix("dry-empty");
    prefixes.push(prefix);
    expect(await redrive({ connection: REDIS_URL, name: "nothing-here", prefix, dryRun: true })).toEqual({
      redriven: [],
      notFailed: [],
    });
    expect(await redis.keys(`${prefix}*`)).toEqual([]);
  });

  it("lists a failed set without changing any key or sending a write", async () => {
    // A server of its own: MONITOR on the shared one would also stream every other test's traffic.
    const server = await ownRedisServer();
    const own = new Redis(server.url);
    const prefix = uniquePrefix("dry-failed");
    // BullMQ is given URLs' options rather than clients, so closing it also closes its connections.
    const connection = { url: server.url, maxRetriesPerRequest: null };
    const queue = new Queue("dlq", { connection, prefix });
    const worker = new Worker("dlq", async () => Promise.reject(new Error("handler broken")), { connection, prefix });
    await queue.addBulk(["a", "b"].map((id) => ({ name: "n", data: {}, opts: { jobId: id, attempts: 1 } })));
    await eventually(async () => (await queue.getFailedCount()) === 2, 10_000, "both jobs to fail");
    await worker.close();
    await queue.close();

    const before = await snapshot(own, prefix);
    const monitor = await monitorCommands(server.url, prefix);
    const result = await redrive({ connection: server.url, name: "dlq", prefix, dryRun: true });
    monitor.stop();

    expect(result.redriven.sort()).toEqual(["a", "b"]);
    expect(await snapshot(own, prefix)).toEqual(before);
    own.disconnect();
    await server.stop();
    expect(monitor.seen.length).toBeGreaterThan(0); // the monitor did see the dry run's reads
    expect(monitor.seen.filter(([command]) => WRITES.has(command!.toLowerCase()))).toEqual([]);
  });
});
