import { Redis } from "ioredis";
import { createReceiver, type IdempotencyStore, type ReceiverResponse } from "merchant-webhooks";
import {
  type BullmqNotificationQueue,
  bullmqQueue,
  createWorker,
  jobIdFor,
  type NotificationWorker,
} from "merchant-webhooks/bullmq";
import { failFastRedisOptions, redisStore } from "merchant-webhooks/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import {
  freePort as closedPort,
  eventually,
  REDIS_URL,
  removeKeys,
  startRedisServer,
  uniquePrefix,
} from "../support/redis.js";

const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  rawBody: json(body),
});
const answer = (response: ReceiverResponse) => ({ status: response.status, ...JSON.parse(response.body) });

describe("bullmqQueue", () => {
  const prefix = uniquePrefix("queue");
  const redis = new Redis(REDIS_URL);
  const closing: Array<{ close(): Promise<unknown> }> = [];
  let store: IdempotencyStore;

  beforeAll(() => {
    store = redisStore({ connection: REDIS_URL, prefix: `${prefix}-store:` });
    closing.push({ close: async () => store.close?.() });
  });

  afterAll(async () => {
    for (const item of closing.reverse()) await item.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  function queueNamed(name: string, options: Partial<Parameters<typeof bullmqQueue>[0]> = {}): BullmqNotificationQueue {
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix, ...options });
    closing.push(queue);
    return queue;
  }

  function workerOn(name: string, handled: Array<{ id: string; headers: Record<string, string> }>): NotificationWorker {
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (n, ctx) => void handled.push({ id: n.id, headers: { ...ctx.headers } }),
    });
    closing.push(worker);
    return worker;
  }

  it("acknowledges once the job is in Redis; a worker started later runs the handler once", async () => {
    const queue = queueNamed("ack");
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const body = notification();

    expect(answer(await receiver.handle(post(body)))).toEqual({
      status: 200,
      processed: true,
      message: "accepted for processing",
    });
    // No worker yet: the acknowledged notification waits in Redis, and its record says queued.
    expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: 1 });
    expect(await store.get(body.id)).toMatchObject({ state: "queued" });

    const handled: Array<{ id: string; headers: Record<string, string> }> = [];
    workerOn("ack", handled);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the record to complete");
    expect(handled.map((h) => h.id)).toEqual([body.id]);
    expect(answer(await receiver.handle(post(body)))).toEqual({
      status: 200,
      processed: true,
      message: "already processed",
    });
    expect(await queue.queue.getJobCounts("waiting", "active", "delayed", "failed")).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 0,
    });
    expect(handled).toHaveLength(1);
  });

  it("does not enqueue a duplicate twice, whether redelivered or added again", async () => {
    const queue = queueNamed("dup");
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const body = notification();

    const [first, second] = (await Promise.all([receiver.handle(post(body)), receiver.handle(post(body))])).map(answer);
    const accepted = { status: 200, processed: true, message: "accepted for processing" };
    // The other delivery met the first one's claim: still being handed over (409), or already queued.
    const alreadyQueued = { status: 200, processed: true, message: "already processed" };
    const busy = { status: 409, processed: false, message: "notification is being processed; retry later" };
    expect([first, second]).toContainEqual(accepted);
    expect([alreadyQueued, busy]).toContainEqual(first?.message === accepted.message ? second : first);
    expect(answer(await receiver.handle(post(body)))).toEqual(alreadyQueued);

    // A second add of the same notification id (a receiver retrying after a lost reply) is a no-op.
    const fingerprint = (await store.get(body.id))!.fingerprint;
    await queue.enqueue({
      id: body.id,
      fingerprint,
      notification: body as never,
      headers: {},
      receivedAt: Date.now(),
      run: async () => {},
    });
    expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: 1 });

    const handled: Array<{ id: string; headers: Record<string, string> }> = [];
    workerOn("dup", handled);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the record to complete");
    expect(handled.map((h) => h.id)).toEqual([body.id]);
  });

  it("runs again a notification delivered after its record expired, when its completed job was kept", async () => {
    // Completed jobs kept: the id's job still sits in the completed set when the record has expired.
    const queue = queueNamed("kept", { jobOptions: { removeOnComplete: false } });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const handled: Array<{ id: string; headers: Record<string, string> }> = [];
    workerOn("kept", handled);
    const body = notification();

    expect(answer(await receiver.handle(post(body)))).toMatchObject({
      status: 200,
      message: "accepted for processing",
    });
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the record to complete");
    expect(await queue.queue.getJobState(jobIdFor(body.id))).toBe("completed");

    // The record's retention ran out; the sender delivers the notification again.
    await redis.del(`${prefix}-store:${body.id}`);
    expect(answer(await receiver.handle(post(body)))).toMatchObject({
      status: 200,
      message: "accepted for processing",
    });
    // The add met the completed job: it was replaced, not left as a no-op, so the handler runs again.
    await eventually(async () => handled.length === 2, 10_000, "the second run");
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the record to complete");
    expect(handled.map((h) => h.id)).toEqual([body.id, body.id]);
  });

  it("runs a job taken before the receiver marks it queued at once, and one whose receiver died between the two steps", async () => {
    // The receiver adds the job, then marks the record queued: hold that second step back for good,
    // as a receiver that died after adding the job would.
    let resume!: () => void;
    const stuck = new Promise<void>((resolve) => (resume = resolve));
    const marks: string[] = [];
    // A store that ignores `queueAtClaim` (as one written before it may): the mark is a step of its own.
    const stalledStore: IdempotencyStore = {
      claim: (request) => store.claim(request.kind === "enqueue" ? { ...request, queueAtClaim: false } : request),
      extend: (claim, leaseMs) => store.extend(claim, leaseMs),
      complete: (claim, result) => store.complete(claim, result),
      fail: (claim, error) => store.fail(claim, error),
      release: (claim) => store.release(claim),
      get: (record) => store.get(record),
      markQueued: async (claim) => {
        await stuck;
        const marked = await store.markQueued(claim);
        marks.push(String(marked));
        return marked;
      },
    };
    const queue = queueNamed("early", { jobOptions: { attempts: 1 } });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: stalledStore, queue });
    const ran: string[] = [];
    const { logger, lines } = captureLogger();
    const worker = createWorker({
      connection: REDIS_URL,
      name: "early",
      prefix,
      idempotency: store,
      logger,
      onRenew: async (n) => void ran.push(n.id),
    });
    closing.push(worker);
    await worker.waitUntilReady();
    const body = notification();

    const answered = receiver.handle(post(body));
    // The worker takes the receiver's claim over: it neither waits for the mark nor puts the job back.
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the record to complete");
    expect(ran).toEqual([body.id]);
    expect(lines().filter((line) => line.outcome === "postponed")).toEqual([]);
    expect(await queue.queue.getJobCounts("failed", "delayed", "waiting")).toEqual({
      failed: 0,
      delayed: 0,
      waiting: 0,
    });
    // A redelivery meets the outcome; the receiver's late mark changes nothing.
    expect(
      answer(await createReceiver({ logger: silentLogger(), idempotency: store, queue }).handle(post(body))),
    ).toMatchObject({
      status: 200,
      message: "already processed",
    });
    resume();
    expect(answer(await answered)).toMatchObject({ status: 200, message: "accepted for processing" });
    expect(marks).toEqual(["false"]);
    expect(ran).toHaveLength(1);
  });

  it("queues again a notification whose record says queued but whose job is gone, and runs it once", async () => {
    const queue = queueNamed("lost");
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, leaseMs: 1_000 });
    const body = notification();
    expect(answer(await receiver.handle(post(body)))).toMatchObject({
      status: 200,
      message: "accepted for processing",
    });
    // While the job is there, a redelivery is told it is already accepted.
    const again = await receiver.handle(post(body));
    expect(answer(again)).toMatchObject({ status: 200 });
    expect(await queue.queue.getJobCounts("waiting")).toEqual({ waiting: 1 });
    // The job is lost (a failover that dropped the last write, a removal by hand): the record still says queued.
    await queue.queue.remove(jobIdFor(body.id));
    expect(await store.get(body.id)).toMatchObject({ state: "queued" });
    // Within the hand-off lease of the receiver that queued it, its job may still be on its way:
    // answered as a delivery in progress. Once the lease lapsed, the notification is queued again.
    const early = await receiver.handle(post(body));
    expect(early.status).toBe(409);
    expect(early.headers["retry-after"]).toBeDefined();
    await eventually(async () => (await receiver.handle(post(body))).status === 200, 10_000, "the lease to lapse");
    expect(await queue.queue.getJobState(jobIdFor(body.id))).toBe("waiting");
    const handled: Array<{ id: string; headers: Record<string, string> }> = [];
    await workerOn("lost", handled).waitUntilReady();
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the record to complete");
    expect(handled.map((h) => h.id)).toEqual([body.id]);
  });

  it("answers a duplicate arriving while the first delivery's job is being added 409, and runs the handler once", async () => {
    const queue = queueNamed("handoff");
    // The first delivery's add is held back: its record is queued (in the claim), its job not there yet.
    let resume!: () => void;
    const held = new Promise<void>((resolve) => (resume = resolve));
    const slowQueue: typeof queue = Object.assign(Object.create(queue), {
      enqueue: async (item: Parameters<typeof queue.enqueue>[0]) => {
        await held;
        return queue.enqueue(item);
      },
    });
    const first = createReceiver({ logger: silentLogger(), idempotency: store, queue: slowQueue });
    const second = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const body = notification();

    const answered = first.handle(post(body));
    await eventually(async () => (await store.get(body.id))?.state === "queued", 10_000, "the claim");
    const duplicate = await second.handle(post(body));
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers["retry-after"]).toBeDefined();
    expect(await queue.queue.getJobState(jobIdFor(body.id))).toBe("unknown");

    resume();
    expect(answer(await answered)).toMatchObject({ status: 200, message: "accepted for processing" });
    const handled: Array<{ id: string; headers: Record<string, string> }> = [];
    workerOn("handoff", handled);
    await eventually(async () => (await store.get(body.id))?.state === "completed", 10_000, "the record to complete");
    expect(answer(await second.handle(post(body)))).toMatchObject({ status: 200, message: "already processed" });
    expect(handled.map((h) => h.id)).toEqual([body.id]);
  });

  it("keeps credentials and signatures out of Redis, and hands the other headers to the handler", async () => {
    const queue = queueNamed("headers");
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const body = notification();
    await receiver.handle(
      post(body, { authorization: "Bearer secret-1", "webhook-signature": "v1,secret-2", "x-request-id": "req-7" }),
    );

    const job = await queue.queue.getJob(jobIdFor(body.id));
    expect(JSON.stringify(job?.data)).not.toMatch(/secret-/);
    const handled: Array<{ id: string; headers: Record<string, string> }> = [];
    workerOn("headers", handled);
    await eventually(() => handled.length === 1, 10_000, "the handler");
    expect(handled[0]!.headers).toEqual({ "content-type": "application/json", "x-request-id": "req-7" });
  });

  it("takes one ioredis client for the queue and the worker, and leaves it open for its owner", async () => {
    const client = new Redis(REDIS_URL, failFastRedisOptions());
    const queue = bullmqQueue({ connection: client, name: "lent", prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const handled: string[] = [];
    const worker = createWorker({
      connection: client,
      name: "lent",
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (n) => void handled.push(n.id),
    });
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(() => handled.length === 1, 10_000, "the handler");

    await receiver.close();
    expect(await worker.close({ timeoutMs: 1_000 })).toBe(true);
    expect(await client.ping()).toBe("PONG");
    client.disconnect();
  });

  it("answers 503 and releases the claim when Redis cannot be reached", async () => {
    const port = await closedPort();
    const queue = queueNamed("down", { connection: `redis://127.0.0.1:${port}`, timeoutMs: 300 });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const body = notification();

    const started = performance.now();
    const response = await receiver.handle(post(body));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(answer(response)).toEqual({ status: 503, processed: false, message: "queue unavailable; retry later" });
    expect(response.headers["retry-after"]).toBe("5");
    // Nothing was acknowledged, and the redelivery is not told "already queued".
    expect(await store.get(body.id)).toBeUndefined();
  });

  it("fails at once, without waiting for its time limit, when Redis goes down after connecting", async () => {
    const server = await startRedisServer();
    closing.push({ close: server.stop });
    const queue = queueNamed("lost", { connection: server.url, timeoutMs: 10_000 });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    expect((await receiver.handle(post(notification()))).status).toBe(200);

    await server.stop();
    const body = notification();
    const started = performance.now();
    const response = await receiver.handle(post(body));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(answer(response)).toMatchObject({ status: 503, processed: false });
    expect(await store.get(body.id)).toBeUndefined();
  });
});
