import { createReceiver, type IdempotencyStore, inProcessQueue, memoryStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LEASE_MS = 120;

/** A receiver on an in-process queue of one lane, whose first handler run waits until `release()`. */
function blockedQueue(override?: (store: IdempotencyStore) => Partial<IdempotencyStore>) {
  let release!: () => void;
  const blocker = new Promise<void>((resolve) => (release = resolve));
  const runs: string[] = [];
  const memory = memoryStore();
  const store = override ? Object.assign(memory, override(memory)) : memory;
  const queue = inProcessQueue({ concurrency: 1 });
  const receiver = createReceiver({
    logger: silentLogger(),
    idempotency: store,
    queue,
    leaseMs: LEASE_MS,
    handlerTimeoutMs: 0,
    onRenew: async (n) => {
      runs.push(n.id);
      if (runs.length === 1) await blocker;
    },
  });
  return { release, runs, store, queue, receiver };
}

/**
 * A notification waiting in the in-process queue keeps its claim: the lease is renewed while it
 * waits, and the queued run checks that it still owns the record before running the handler.
 */
describe("a notification waiting in inProcessQueue", () => {
  it("keeps its claim past the lease: a redelivery meets 409 and the handler runs once", async () => {
    const { release, runs, store, queue, receiver } = blockedQueue();
    const [first, waiting] = [notification(), notification()];
    expect((await receiver.handle(post(first))).status).toBe(200);
    expect((await receiver.handle(post(waiting))).status).toBe(200);

    await sleep(LEASE_MS * 3); // the waiting notification's first lease is long gone
    const redelivered = await receiver.handle(post(waiting));
    expect(redelivered.status).toBe(409);

    release();
    await queue.close();
    expect(runs).toEqual([first.id, waiting.id]);
    expect(store.get(waiting.id)).toMatchObject({ state: "completed", attempts: 1 });
  });

  it("does not run the handler when another process took the claim over while it waited", async () => {
    const { release, runs, store, queue, receiver } = blockedQueue();
    const [first, waiting] = [notification(), notification()];
    await receiver.handle(post(first));
    await receiver.handle(post(waiting));
    // Another process takes the record over (as after a lapse it could not see renewed) and completes it.
    const record = (await store.get(waiting.id))!;
    store.release({ id: waiting.id, owner: record.owner! });
    store.claim({ id: waiting.id, fingerprint: record.fingerprint, owner: "elsewhere", leaseMs: 60_000 });
    store.complete({ id: waiting.id, owner: "elsewhere" }, { processed: true, message: "processed" });

    release();
    await queue.close();
    expect(runs).toEqual([first.id]);
    expect(store.get(waiting.id)).toMatchObject({ state: "completed", owner: "elsewhere" });
  });

  it("does not run the handler when its claim can only be confirmed too late: renewals answered past half the lease", async () => {
    let slow = false;
    const { release, runs, store, queue, receiver } = blockedQueue((memory) => {
      const extend = memory.extend.bind(memory);
      return {
        extend: async (claim, leaseMs) => {
          const held = await extend(claim, leaseMs);
          if (slow) await sleep(LEASE_MS);
          return held;
        },
      };
    });
    const [first, waiting] = [notification(), notification()];
    await receiver.handle(post(first));
    await receiver.handle(post(waiting));
    slow = true;
    await sleep(LEASE_MS);
    release();
    await queue.close();
    expect(runs).toEqual([first.id]);
    // Not run here: the record stays this receiver's claim until its lease lapses, for a redelivery.
    expect(store.get(waiting.id)).toMatchObject({ state: "processing", attempts: 1 });
  });
});
