import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

/** `store` whose calls named in `hang` never settle the first time they are made (a command lost in a failover). */
function hangingOnce(store: IdempotencyStore, hang: ReadonlySet<keyof IdempotencyStore>): IdempotencyStore {
  const hung = new Set<string>();
  const once =
    <A extends unknown[], R>(name: keyof IdempotencyStore, call: (...args: A) => R) =>
    (...args: A): R | Promise<never> => {
      if (hang.has(name) && !hung.has(name)) {
        hung.add(name);
        return new Promise<never>(() => {});
      }
      return call(...args);
    };
  return {
    leaseMs: 2_000,
    claim: once("claim", (request) => store.claim(request)),
    extend: once("extend", (claim, leaseMs) => store.extend(claim, leaseMs)),
    complete: once("complete", (claim, answer) => store.complete(claim, answer)),
    fail: once("fail", (claim, error) => store.fail(claim, error)),
    markQueued: (claim) => store.markQueued(claim),
    release: (claim) => store.release(claim),
    get: (record) => store.get(record),
  };
}

describe("a worker whose store call never answers", () => {
  const prefix = uniquePrefix("store-deadlines");
  const redis = new Redis(REDIS_URL);
  const closers: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  async function run(hang: ReadonlySet<keyof IdempotencyStore>) {
    const name = `deadlines-${[...hang].join("-")}`;
    const store = memoryStore();
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const onRenew = vi.fn();
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: hangingOnce(store, hang),
      logger: silentLogger(),
      concurrency: 1,
      leaseMs: 2_000,
      onRenew,
    });
    closers.push(
      () => worker.close({ timeoutMs: 1_000 }),
      () => receiver.close(),
    );
    const body = notification("SUBSCRIPTION_RENEW");
    const answer = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json" },
      rawBody: json(body),
    });
    expect(answer.status).toBe(200);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 30_000, "the completion");
    return { onRenew, queue };
  }

  it("a claim that hangs: the job is postponed past the deadline, then the handler runs once", async () => {
    const { onRenew, queue } = await run(new Set(["claim"]));
    expect(onRenew).toHaveBeenCalledTimes(1);
    await eventually(async () => (await queue.queue.getJobCountByTypes("waiting", "delayed", "active")) === 0);
  }, 40_000);

  it("a completion that hangs: it is written again, and the handler still runs once", async () => {
    const { onRenew, queue } = await run(new Set(["complete"]));
    expect(onRenew).toHaveBeenCalledTimes(1);
    await eventually(async () => (await queue.queue.getJobCountByTypes("waiting", "delayed", "active")) === 0);
  }, 40_000);
});
