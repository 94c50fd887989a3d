import { createReceiver } from "merchant-webhooks";
import { bullmqQueue, createWorker, jobIdFor, redrive } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { runRedrive } from "../../src/cli/commands/redrive.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { redisTestbed } from "../support/redis-testbed.js";

const ATTEMPTS = 3;
const BACKOFF_MS = 100;

describe("the failed set as a dead-letter queue", () => {
  const { prefix, store, closeAfter } = redisTestbed("dlq");

  /** A receiver and a worker whose handler fails while `broken.value` is true. */
  function setup(name: string) {
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name,
      prefix,
      jobOptions: { attempts: ATTEMPTS, backoff: { type: "exponential", delay: BACKOFF_MS } },
    });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    const broken = { value: true };
    const runs: Array<{ id: string; at: number; attempt: number; ok: boolean }> = [];
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: store,
      logger: silentLogger(),
      onRenew: async (n, ctx) => {
        runs.push({ id: n.id, at: Date.now(), attempt: ctx.attempt, ok: !broken.value });
        if (broken.value) throw new Error("downstream rejected the renewal");
      },
    });
    closeAfter(
      () => worker.close({ timeoutMs: 1_000 }),
      () => receiver.close(),
    );
    const failed = async (id: string) => (await queue.queue.getJobState(jobIdFor(id))) === "failed";
    return { queue, receiver, broken, runs, failed };
  }

  it("keeps a notification whose handler always throws in the failed set after its attempts, with backoff", async () => {
    const { receiver, runs, failed, queue } = setup("always-throws");
    const body = notification();
    expect((await receiver.handle(post(body))).status).toBe(200);

    await eventually(() => failed(body.id), 10_000, "the job to fail for good");
    expect(runs.map((r) => r.attempt)).toEqual([1, 2, 3]);
    // Exponential backoff: 100 ms before the second run, 200 ms before the third.
    const gaps = runs.slice(1).map((r, i) => r.at - runs[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(BACKOFF_MS);
    expect(gaps[1]).toBeGreaterThanOrEqual(2 * BACKOFF_MS);
    const job = await queue.queue.getJob(jobIdFor(body.id));
    expect(job).toMatchObject({ attemptsMade: ATTEMPTS, failedReason: "downstream rejected the renewal" });
    expect(await store.get(body.id)).toMatchObject({ state: "failed" });
  });

  it("completes a dead-lettered notification once redriven after a fix, and only that one", async () => {
    const { receiver, runs, failed, broken, queue } = setup("redrive");
    const [fixed, other] = [notification(), notification()];
    for (const body of [fixed, other]) await receiver.handle(post(body));
    await eventually(async () => (await failed(fixed.id)) && (await failed(other.id)), 10_000, "both jobs to fail");

    broken.value = false;
    expect(await redrive({ connection: REDIS_URL, name: "redrive", prefix, ids: [fixed.id, "never-seen"] })).toEqual({
      redriven: [fixed.id],
      notFailed: ["never-seen"],
    });
    await eventually(
      async () => (await store.get(fixed.id))?.state === "completed",
      10_000,
      "the redriven notification",
    );
    expect(runs.filter((r) => r.id === fixed.id && r.ok)).toHaveLength(1);
    expect(await failed(other.id)).toBe(true);
    expect(await queue.queue.getJobCounts("failed")).toEqual({ failed: 1 });
  });

  it("redrives the whole failed set from the CLI", async () => {
    const { receiver, runs, failed, broken, queue } = setup("cli");
    const bodies = [notification(), notification(), notification()];
    for (const body of bodies) await receiver.handle(post(body));
    await eventually(
      async () => (await Promise.all(bodies.map((b) => failed(b.id)))).every(Boolean),
      10_000,
      "all jobs to fail",
    );
    const lines: string[] = [];
    const io = {
      out: (text: string) => void lines.push(text),
      err: (text: string) => void lines.push(text),
      tty: false,
      columns: 80,
    };
    const cli = (...args: string[]) =>
      runRedrive(["--queue", "cli", "--redis", REDIS_URL, "--prefix", prefix, ...args], io);

    expect(await cli("--dry-run")).toBe(0);
    expect(lines.at(-1)).toBe("3 would be redriven from queue cli\n");
    expect(await queue.queue.getJobCounts("failed")).toEqual({ failed: 3 });

    broken.value = false;
    expect(await cli()).toBe(0);
    expect(lines.at(-1)).toBe("3 redriven from queue cli\n");
    await eventually(
      async () => (await Promise.all(bodies.map((b) => store.get(b.id)))).every((r) => r?.state === "completed"),
      10_000,
      "all to complete",
    );
    expect(
      runs
        .filter((r) => r.ok)
        .map((r) => r.id)
        .sort(),
    ).toEqual(bodies.map((b) => b.id).sort());

    expect(await cli("--id", bodies[0]!.id)).toBe(1);
    expect(lines.at(-2)).toBe(`not in the failed set: ${bodies[0]!.id}\n`);
    expect(await runRedrive(["--redis", REDIS_URL], io)).toBe(2);
    expect(lines.at(-1)).toContain("--queue is required");
  });

  it("runs a dead-lettered notification again when the platform delivers it again", async () => {
    const { receiver, runs, failed, broken } = setup("redelivered");
    const body = notification();
    await receiver.handle(post(body));
    await eventually(() => failed(body.id), 10_000, "the job to fail");

    broken.value = false;
    const response = await receiver.handle(post(body));
    expect(JSON.parse(response.body)).toEqual({ processed: true, message: "accepted for processing" });
    await eventually(
      async () => (await store.get(body.id))?.state === "completed",
      10_000,
      "the redelivered notification",
    );
    expect(runs.filter((r) => r.ok)).toHaveLength(1);
  });

  it("sends a job whose data is not a valid notification straight to the failed set, without running a handler", async () => {
    const { queue, runs } = setup("bad-data");
    await queue.queue.add(
      "SUBSCRIPTION_RENEW",
      { notification: { id: "x" }, headers: {}, receivedAt: 0, fingerprint: "f" } as never,
      { jobId: "bad-1" },
    );
    await eventually(async () => (await queue.queue.getJobState("bad-1")) === "failed", 10_000, "the job to fail");
    const job = await queue.queue.getJob("bad-1");
    expect(job?.attemptsMade).toBe(1);
    expect(job?.failedReason).toMatch(/^job data: invalid notification: /);
    expect(runs).toEqual([]);
  });
});
