import { createReceiver, type SubscriptionNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker, type NotificationWorker } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, REDIS_URL, sleep } from "../support/redis.js";
import { redisTestbed } from "../support/redis-testbed.js";
import { queueWorkerEnv, spawnWorker, type WorkerProcess } from "./fixtures/spawn-worker.js";

/**
 * Short claims, locks and stalled checks, so a dead worker's job is picked up in about two seconds.
 * Every worker on a queue gets the same stalled interval: the first to check holds off the others
 * for its own interval.
 */
const LEASE_MS = 1_000;
const STALLED_INTERVAL_MS = 500;

describe("workers that die or stop", () => {
  const { prefix, storePrefix, redis, store, closeAfter } = redisTestbed("crash");
  const effects = `${prefix}-effects`;

  function setup(name: string) {
    const queue = bullmqQueue({ connection: REDIS_URL, name, prefix });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    closeAfter(() => receiver.close());
    const spawn = async (env: Record<string, string> = {}) => {
      const child = await spawnWorker({
        ...queueWorkerEnv({ redisUrl: REDIS_URL, queue: name, prefix, storePrefix, effects }),
        LEASE_MS: String(LEASE_MS),
        STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS),
        ...env,
      });
      closeAfter(async () => {
        child.kill("SIGKILL");
        await child.exited;
      });
      return child;
    };
    const local = (
      onRenew: (n: SubscriptionNotification, ctx: { attempt: number; signal: AbortSignal }) => Promise<void>,
    ) => {
      const worker = createWorker({
        connection: REDIS_URL,
        name,
        prefix,
        idempotency: store,
        logger: silentLogger(),
        leaseMs: LEASE_MS,
        stalledInterval: STALLED_INTERVAL_MS,
        onRenew,
      });
      closeAfter(() => worker.close({ timeoutMs: 1_000 }));
      return worker;
    };
    const count = async (kind: "started" | "done", id: string) =>
      Number((await redis.get(`${effects}:${kind}:${id}`)) ?? 0);
    return { queue, receiver, spawn, local, count };
  }

  it("picks up the job of a worker killed with SIGKILL mid-handler, and runs no completed notification again", async () => {
    const { receiver, spawn, local, count } = setup("killed");
    const slow = notification();
    const quick = Array.from({ length: 20 }, () => notification());
    const child: WorkerProcess = await spawn({ HANG_ID: slow.id, CONCURRENCY: "5" });

    for (const body of [slow, ...quick]) expect((await receiver.handle(post(body))).status).toBe(200);
    await eventually(async () => (await count("started", slow.id)) === 1, 10_000, "the slow handler to start");
    // Completed in the store, not only run: a handler that returned but whose completion the kill cut
    // off is not a completed notification, and runs again (its handler is not in a transaction).
    await eventually(
      async () => (await Promise.all(quick.map((b) => store.get(b.id)))).every((r) => r?.state === "completed"),
      10_000,
      "the quick ones",
    );
    child.kill("SIGKILL");
    expect(await child.exited).toBeNull();
    expect(await count("done", slow.id)).toBe(0);

    const attempts: number[] = [];
    local(async (n, ctx) => {
      attempts.push(ctx.attempt);
      await redis.incr(`${effects}:done:${n.id}`);
    });
    await eventually(
      async () => (await store.get(slow.id))?.state === "completed",
      15_000,
      "the slow notification to complete",
    );
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(await count("done", slow.id)).toBe(1);
    // The handler knows this is its second run: the first one died with the worker.
    expect(attempts).toEqual([2]);
    expect(await Promise.all(quick.map((b) => count("done", b.id)))).toEqual(quick.map(() => 1));
  });

  it("does not run a handler again when its worker died after recording it complete", async () => {
    const { receiver, spawn, local, count, queue } = setup("died-after");
    const body = notification();
    const child = await spawn({ DIE_AFTER_COMPLETE_ID: body.id });
    await receiver.handle(post(body));
    expect(await child.exited).toBeNull();
    // The record says completed, but BullMQ still holds the job as active under the dead worker's lock.
    expect(await store.get(body.id)).toMatchObject({ state: "completed" });
    expect(await queue.queue.getJobCounts("active")).toEqual({ active: 1 });

    let runs = 0;
    local(async () => void runs++);
    const left = async () =>
      Object.values(await queue.queue.getJobCounts("active", "waiting", "delayed", "failed")).reduce(
        (a, b) => a + b,
        0,
      );
    await eventually(async () => (await left()) === 0, 15_000, "the stalled job to leave the queue");
    expect(runs).toBe(0);
    expect(await count("done", body.id)).toBe(1);
  });

  it("a worker frozen (SIGSTOP) past its lease: another runs the notification; resumed, its signal aborts, it records nothing and fails nothing", async () => {
    const { receiver, spawn, local, count, queue } = setup("frozen");
    const body = notification();
    // Its handler would take 20 s: it is mid-run when frozen, and still so when it resumes.
    const child = await spawn({ HANDLER_MS: "20000", ABORTABLE: "1" });
    await receiver.handle(post(body));
    await eventually(async () => (await count("started", body.id)) === 1, 10_000, "the handler to start");
    child.kill("SIGSTOP");
    local(async (n) => void (await redis.incr(`${effects}:done:${n.id}`)));
    await eventually(
      async () => (await store.get(body.id))?.state === "completed",
      20_000,
      "another worker to complete it",
    );
    child.kill("SIGCONT");
    await eventually(
      async () => Number((await redis.get(`${effects}:aborted:${body.id}`)) ?? 0) === 1,
      10_000,
      "the resumed handler's signal to abort",
    );
    await eventually(
      async () => (await queue.queue.getJobCountByTypes("waiting", "delayed", "active")) === 0,
      10_000,
      "the queue to empty",
    );
    await sleep(LEASE_MS);
    expect(await count("done", body.id)).toBe(1);
    expect(await store.get(body.id)).toMatchObject({ state: "completed" });
    expect(await queue.queue.getJobCountByTypes("failed")).toBe(0);
    expect(child.child.exitCode).toBeNull();
  });

  it("finishes the running handler on SIGTERM before the worker process exits", async () => {
    const { receiver, spawn, count } = setup("sigterm");
    const child = await spawn({ HANDLER_MS: "400" });
    const body = notification();
    await receiver.handle(post(body));
    await eventually(async () => (await count("started", body.id)) === 1, 10_000, "the handler to start");

    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    expect(await count("done", body.id)).toBe(1);
    expect(await store.get(body.id)).toMatchObject({ state: "completed" });
  });

  it("on a close past its time limit, aborts the handler and hands the job to another worker", async () => {
    const { receiver, local, count } = setup("handback");
    const body = notification();
    let aborted = false;
    const first: NotificationWorker = local(async (_n, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
      aborted = true;
      throw new Error("stopped before doing anything");
    });
    await receiver.handle(post(body));
    await eventually(async () => (await store.get(body.id))?.state === "processing", 10_000, "the handler to start");

    expect(await first.close({ timeoutMs: 200 })).toBe(false);
    expect(aborted).toBe(true);

    local(async (n) => void (await redis.incr(`${effects}:done:${n.id}`)));
    await eventually(
      async () => (await store.get(body.id))?.state === "completed",
      10_000,
      "another worker to complete it",
    );
    expect(await count("done", body.id)).toBe(1);
  });
});
