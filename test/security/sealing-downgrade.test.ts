import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createReceiver, memoryStore, type SubscriptionNotification } from "merchant-webhooks";
import { type BullmqNotificationQueue, bullmqQueue, createWorker, jobIdFor } from "merchant-webhooks/bullmq";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { suitePrefix } from "./suite-prefix.js";

const prefix = suitePrefix("sealing");
const redis = new Redis(REDIS_URL);
afterAll(() => redis.disconnect());

const cancellation = (id: string) =>
  buildNotification("SUBSCRIPTION_CANCELLED", {
    id,
    resource: { merchant_id: "M-1", id: `SUB-${id}`, update_time: "2026-03-01T10:00:00Z" },
  });

/** Runs a worker with `key` over `name` until the job `id` has settled; returns what its onCancel saw. */
async function runWorker(name: string, key: Uint8Array, queue: BullmqNotificationQueue, id: string) {
  const ran: SubscriptionNotification[] = [];
  const worker = createWorker({
    connection: REDIS_URL,
    name,
    prefix,
    idempotency: memoryStore(),
    logger: silentLogger(),
    encryptionKey: key,
    onCancel: (n) => void ran.push(n),
  });
  try {
    const state = await eventually(
      async () => {
        // Completed jobs are removed at once: a handler that ran is the sign of completion.
        if (ran.length > 0) return "completed";
        const s = await queue.queue.getJobState(jobIdFor(id));
        return s === "failed" ? s : undefined;
      },
      20_000,
      "the job to settle",
    );
    const job = await queue.queue.getJob(jobIdFor(id));
    return { ran, state, failedReason: job?.failedReason };
  } finally {
    await worker.close();
  }
}

/** Deliver through a receiver (ordering on) into `queue`, with no worker running yet. */
async function enqueue(queue: BullmqNotificationQueue, body: Record<string, unknown>) {
  const receiver = createReceiver({ logger: silentLogger(), idempotency: memoryStore(), queue, ordering: true });
  const answer = await receiver.handle({
    method: "POST",
    headers: { "content-type": "application/json" },
    rawBody: new TextEncoder().encode(JSON.stringify(body)),
  });
  expect(answer.status).toBe(200);
}

const dataKey = (queue: BullmqNotificationQueue, id: string) => queue.queue.toKey(jobIdFor(id));

describe("a worker given encryptionKey", () => {
  it("fails an unsealed job added around bullmqQueue (a plain BullMQ add) without running onCancel", async () => {
    const key = randomBytes(32);
    const queue = bullmqQueue({ connection: REDIS_URL, name: "unsealed", prefix, jobOptions: { attempts: 1 } });
    const body = cancellation(`EVT-unsealed-${process.pid}`);
    await queue.queue.add(
      "SUBSCRIPTION_CANCELLED",
      {
        id: body.id,
        event_type: body.event_type,
        notification: body,
        headers: {},
        receivedAt: Date.now(),
        fingerprint: "f".repeat(64),
      } as never,
      { jobId: jobIdFor(body.id) },
    );
    const { ran, state, failedReason } = await runWorker("unsealed", key, queue, body.id);
    expect(state).toBe("failed");
    expect(failedReason).toMatch(/not sealed, and this worker has an encryptionKey/);
    expect(ran).toEqual([]);
    await queue.close();
  });

  it("runs a sealed job whose fields are as the receiver wrote them", async () => {
    const key = randomBytes(32);
    const queue = bullmqQueue({ connection: REDIS_URL, name: "intact", prefix, encryptionKey: key });
    const body = cancellation(`EVT-intact-${process.pid}`);
    await enqueue(queue, body);
    const stored = JSON.parse((await redis.hget(dataKey(queue, body.id), "data"))!);
    expect(stored.sealed.v).toBe(3);
    expect(stored.handoff).toEqual(expect.any(String));
    expect(stored.ledger).toEqual(expect.any(Number));
    expect(stored.order).toEqual({ key: `M-1:SUB-${body.id}`, position: "2026-03-01T10:00:00" });
    const { ran, state } = await runWorker("intact", key, queue, body.id);
    expect(state).toBe("completed");
    expect(ran.map((n) => n.id)).toEqual([body.id]);
    await queue.close();
  });

  it.each([
    ["its ordering position", (d: Record<string, any>) => (d.order.position = "9999-12-31T23:59:59")],
    ["its order key", (d: Record<string, any>) => (d.order.key = "M-1:SUB-other")],
    ["its fingerprint", (d: Record<string, any>) => (d.fingerprint = "0".repeat(64))],
    ["its headers", (d: Record<string, any>) => (d.headers["user-agent"] = "forged")],
    // The claim a worker may take over at once, and which ledger copy it drops when done.
    ["its handoff", (d: Record<string, any>) => (d.handoff = "someone-else:1")],
    ["its ledger part", (d: Record<string, any>) => (d.ledger = (d.ledger + 1) % 4)],
    ["its handoff removed", (d: Record<string, any>) => delete d.handoff],
    [
      "a clear notification beside the seal, the seal removed",
      (d: Record<string, any>) => {
        d.notification = JSON.parse(JSON.stringify(d.notification ?? {}));
        delete d.sealed;
      },
    ],
  ])("fails a sealed job whose data had %s changed in Redis, without running onCancel", async (what, change) => {
    const key = randomBytes(32);
    const name = `tampered-${what.replace(/\W+/g, "-")}`;
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix, encryptionKey: key, jobOptions: { attempts: 1 } });
    const body = cancellation(`EVT-tamper-${process.pid}-${name}`);
    await enqueue(queue, body);
    const data = JSON.parse((await redis.hget(dataKey(queue, body.id), "data"))!);
    data.headers ??= {};
    change(data);
    await redis.hset(dataKey(queue, body.id), "data", JSON.stringify(data));
    const { ran, state, failedReason } = await runWorker(name, key, queue, body.id);
    expect(state).toBe("failed");
    expect(failedReason).toMatch(/integrity check|not sealed/);
    expect(ran).toEqual([]);
    await queue.close();
  });
});
