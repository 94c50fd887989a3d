import { Redis } from "ioredis";
import { createReceiver, type HandlerContext, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { createAdmin } from "merchant-webhooks/console";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const post = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  rawBody: json(body),
});

describe("one attempt count on BullMQ: the record, the job, ctx.attempt and the console agree", () => {
  const prefix = uniquePrefix("bmqatt");
  const redis = new Redis(REDIS_URL);
  const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}store:` });
  const cleanup: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
    await store.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });
  const seen = new Map<string, number[]>();
  const failOnce = new Set<string>();
  const failAlways = new Set<string>();
  const onRenew = async (n: SubscriptionNotification, ctx: HandlerContext) => {
    seen.set(n.id, [...(seen.get(n.id) ?? []), ctx.attempt]);
    if (failOnce.delete(n.id) || failAlways.has(n.id)) throw new Error("transient");
  };
  function setup(name: string) {
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name,
      prefix,
      jobOptions: { attempts: 3, backoff: { type: "fixed", delay: 10 } },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew,
    });
    cleanup.push(
      () => worker.close({ timeoutMs: 1_000 }),
      () => queue.close(),
      () => receiver.close(),
    );
    return { receiver, admin: createAdmin({ idempotency: store, queue }) };
  }
  const record = (id: string) => store.get(id);
  const completed = (ids: string[]) => async () =>
    (await Promise.all(ids.map(record))).every((found) => found?.state === "completed");

  it("a notification that ran once: attempt 1 everywhere; one that failed once: attempt 2 everywhere", async () => {
    const { receiver, admin } = setup("count");
    const [once, twice] = [notification(), notification()];
    failOnce.add(twice.id);
    for (const body of [once, twice]) expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(completed([once.id, twice.id]), 15_000, "both to complete");

    for (const [body, runs] of [
      [once, [1]],
      [twice, [1, 2]],
    ] as const) {
      expect(seen.get(body.id)).toEqual(runs);
      expect(await record(body.id)).toMatchObject({ state: "completed", attempts: runs.length });
      expect((await admin.getNotification(body.id))?.record).toMatchObject({ attempts: runs.length });
    }
  });

  it("a notification that always fails: its attempts on the record, the dead-letter job and the console alike", async () => {
    const { receiver, admin } = setup("count-dead");
    const body = notification();
    failAlways.add(body.id);
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await record(body.id))?.state === "failed", 15_000, "the record to fail");
    await eventually(
      async () => (await admin.getNotification(body.id))?.job?.state === "failed",
      15_000,
      "the job in the failed set",
    );
    expect(seen.get(body.id)).toEqual([1, 2, 3]);
    expect(await record(body.id)).toMatchObject({ state: "failed", attempts: 3 });
    const detail = await admin.getNotification(body.id);
    expect(detail?.record).toMatchObject({ attempts: 3 });
    expect(detail?.job).toMatchObject({ state: "failed", attemptsMade: 3 });
  });
});
