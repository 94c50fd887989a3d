import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runRedrive } from "../../src/cli/commands/redrive.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { captureIo } from "./capture-io.js";
import { runCli } from "./run-cli.js";

const HOSTILE_ID = "WH-\x1b]0;owned\x07\x1b[2J\u009b31m";

describe("merchant-webhooks redrive on a Redis server", () => {
  const prefix = uniquePrefix("cli-redrive");
  const name = "subscription-notifications";
  const redis = new Redis(REDIS_URL);
  let queue: Queue;

  beforeAll(async () => {
    queue = new Queue(name, { connection: { url: REDIS_URL }, prefix });
    await queue.add("notification", { id: HOSTILE_ID }, { attempts: 1 });
    const worker = new Worker(
      name,
      async () => {
        throw new Error("downstream rejected it");
      },
      { connection: { url: REDIS_URL, maxRetriesPerRequest: null }, prefix },
    );
    await eventually(async () => (await queue.getFailedCount()) === 1, 15_000, "the job to fail");
    await worker.close();
  });
  afterAll(async () => {
    await queue.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("a misspelt queue is an error, exit 1, listing the queues found, and creates no key", async () => {
    const run = await runCli(["redrive", "--queue", `${name}s`, "--redis", REDIS_URL, "--prefix", prefix]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`no queue ${name}s with prefix ${prefix} on Redis at ${REDIS_URL}. Queues found:\n`);
    expect(run.stderr).toContain(`\n  ${name}  --prefix ${prefix}\n`);
    expect(run.stdout).toBe("");
    expect(await redis.keys(`${prefix}:${name}s*`)).toEqual([]);
  });

  it("prints a notification id's control characters escaped, never raw", async () => {
    const io = captureIo();
    expect(await runRedrive(["--queue", name, "--redis", REDIS_URL, "--prefix", prefix, "--dry-run"], io)).toBe(0);
    expect(io.stdout).toBe(
      `would redrive: WH-\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\n1 would be redriven from queue ${name}\n`,
    );
    const asked = captureIo();
    expect(
      await runRedrive(["--queue", name, "--redis", REDIS_URL, "--prefix", prefix, "--id", "WH-\x1bx"], asked),
    ).toBe(1);
    expect(asked.stderr).toBe("not in the failed set: WH-\\x1bx\n");
  });

  it("on a cluster without a hash-tagged prefix, says what to give, exit 2", async () => {
    const io = captureIo();
    expect(await runRedrive(["--queue", name, "--redis", REDIS_URL, "--cluster"], io)).toBe(2);
    expect(io.stderr).toContain(
      'on a Redis Cluster a queue\'s keys need a hash tag in --prefix, the one given to bullmqQueue, such as --prefix "{mw}"\n',
    );
  });
});
