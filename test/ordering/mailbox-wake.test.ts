import { Redis } from "ioredis";
import { type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it } from "vitest";
import { type ClaimHandle, drainedLanes } from "../../src/idempotency/store.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const LEASE = 30_000;
const answer = { processed: true, message: "processed" };
const ITERATIONS = 10_000;
/** Iterations run at once, each on its own subscription. */
const PARALLEL = 10;

/** A receiver's append of `id` to `key`'s mailbox: the claim made for a queue, then the hand-over that says whether to wake a runner. */
async function append(store: IdempotencyStore, key: string, id: string, position: string) {
  const owner = `receiver-${id}`;
  const claim = await store.claim({
    id,
    fingerprint: `f-${id}`,
    owner,
    leaseMs: LEASE,
    order: { key, position },
    kind: "append",
  });
  expect(claim.status).toBe("claimed");
  return drainedLanes(store)!.append(claim as ClaimHandle, LEASE);
}

/**
 * The state just before a runner finds its mailbox empty: `a` appended (which woke a runner), taken by
 * the runner and completed. Then the runner's next take races the append of `b`. Either the take
 * finds `b`, or the append is told to wake a new runner, which finds it: never neither (stranded).
 */
async function race(
  runnerStore: IdempotencyStore,
  receiverStore: IdempotencyStore,
  key: string,
  headStart: () => Promise<void>,
) {
  expect(await append(receiverStore, key, `${key}-a`, "2026-03-01T00:00:01")).toEqual({ queued: true, wake: true });
  const runner = `runner-${key}`;
  const a = await runnerStore.lanes!.takeNext({ key }, runner, LEASE);
  expect(a).toMatchObject({ status: "claimed", id: `${key}-a` });
  expect(await runnerStore.complete(a!, answer)).toBe(true);
  const take = (async () => {
    await headStart();
    return runnerStore.lanes!.takeNext({ key }, runner, LEASE);
  })();
  const [taken, appended] = await Promise.all([take, append(receiverStore, key, `${key}-b`, "2026-03-01T00:00:02")]);
  if (taken) {
    expect(taken).toMatchObject({ status: "claimed", id: `${key}-b` });
    expect(await runnerStore.complete(taken, answer)).toBe(true);
    return appended.wake ? "found, woke too" : "found by the runner";
  }
  if (!appended.wake) return "stranded";
  const woken = await runnerStore.lanes!.takeNext({ key }, `second-${key}`, LEASE);
  if (woken?.id !== `${key}-b`) return "stranded";
  expect(await runnerStore.complete(woken, answer)).toBe(true);
  return "woke a runner";
}

describe("a mailbox's runner stops and an append meets it: no lost wake-up", () => {
  const prefix = uniquePrefix("mailbox-wake");
  const redis = new Redis(REDIS_URL);
  // Two clients, as a worker and a receiver in two processes: their scripts interleave in Redis. The
  // machine is shared and loaded: a call may take longer than the default 500 ms limit.
  const runnerStore = redisStore({ connection: REDIS_URL, prefix, timeoutMs: 5_000 });
  const receiverStore = redisStore({ connection: REDIS_URL, prefix, timeoutMs: 5_000 });

  afterAll(async () => {
    await runnerStore.close();
    await receiverStore.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it(`redisStore: ${ITERATIONS.toLocaleString("en")} appends raced against the runner's last take, none stranded`, async () => {
    const outcomes: Record<string, number> = {};
    // A varying head start, so the take lands before, between and after the append's two steps. Counted
    // in round trips to Redis rather than in event-loop turns: a loaded machine stretches both alike.
    const headStart = (n: number) => async () => {
      for (let i = 0; i < n % 5; i++) await redis.ping();
      for (let i = 0; i < n % 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    };
    for (let start = 0; start < ITERATIONS; start += PARALLEL) {
      const batch = Array.from({ length: PARALLEL }, (_, i) =>
        race(runnerStore, receiverStore, `sub-${start + i}`, headStart(start + i)),
      );
      for (const outcome of await Promise.all(batch)) outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
    console.info("lost wake-up race outcomes", outcomes);
    expect(outcomes.stranded ?? 0).toBe(0);
    // The race really happened both ways: some appends were found by the runner, others woke one.
    expect(outcomes["found by the runner"] ?? 0).toBeGreaterThan(0);
    expect(outcomes["woke a runner"] ?? 0).toBeGreaterThan(0);
  }, 120_000);

  it("memoryStore: an append while the runner holds the key is found by it; one after it stopped wakes another", async () => {
    const store = memoryStore();
    expect(await race(store, store, "held", async () => {})).toBe("woke a runner");
    // Appended while the runner still holds the key (its handler running): no second drain job, and the runner's next take finds it.
    expect(await append(store, "busy", "busy-a", "2026-03-01T00:00:01")).toEqual({ queued: true, wake: true });
    const a = await store.lanes.takeNext({ key: "busy" }, "runner", LEASE);
    expect(a).toMatchObject({ id: "busy-a" });
    expect(await append(store, "busy", "busy-b", "2026-03-01T00:00:02")).toEqual({ queued: true, wake: false });
    expect(await store.complete(a!, answer)).toBe(true);
    expect(await store.lanes.takeNext({ key: "busy" }, "runner", LEASE)).toMatchObject({ id: "busy-b" });
  });
});
