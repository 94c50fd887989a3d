import { describe, expect, it } from "vitest";
import {
  type ClaimHandle,
  type ClaimResult,
  drainedLanes,
  type IdempotencyStore,
} from "../../src/idempotency/store.js";
import { type AdvanceTime, type MakeStore, storesClosedAfterEach } from "./store-contract.js";

const LEASE = 150;
const answer = { processed: true, message: "processed" };
// Sortable positions (see src/idempotency/position.ts): the store compares them as they are.
const T1 = "2026-03-01T02:00:00";
const T1_HALF = "2026-03-01T02:00:00.5";
const T1_LATER_FRACTION = "2026-03-01T02:00:00.50001";
const T2 = "2026-03-01T03:00:00";

/**
 * Claims in order, as every store must give them: one live claim per order key, nothing older than the
 * key's newest completion run, and a failed run leaves the key's position where it was.
 */
export function orderContract(name: string, makeStore: MakeStore, advanceTime?: AdvanceTime): void {
  const advance = advanceTime ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  describe(`${name}: claims in order`, () => {
    const open = storesClosedAfterEach(makeStore);
    const claim = (
      store: IdempotencyStore,
      id: string,
      owner: string,
      position?: string,
      key = "sub-1",
      take = false,
    ) =>
      store.claim({
        kind: take ? "take" : "run",
        id,
        fingerprint: `f-${id}`,
        owner,
        leaseMs: LEASE,
        order: position === undefined ? { key } : { key, position },
      });
    const run = async (
      store: IdempotencyStore,
      id: string,
      owner: string,
      position?: string,
      key = "sub-1",
    ): Promise<ClaimResult> => {
      const result = await claim(store, id, owner, position, key);
      if (result.status === "claimed" || result.status === "stale")
        expect(await store.complete({ id: id, owner: owner, order: { key: key } }, answer)).toBe(true);
      return result;
    };

    it("claims the first notification of a key with no previous position, the next with the last completed one", async () => {
      const store = await open();
      expect(await claim(store, "n-1", "o1", T1)).toEqual({
        status: "claimed",
        id: "n-1",
        owner: "o1",
        order: { key: "sub-1", position: T1 },
        attempt: 1,
      });
      expect(await store.get({ id: "n-1", order: { key: "sub-1" } })).toMatchObject({
        state: "processing",
        owner: "o1",
      });
      expect(await store.complete({ id: "n-1", owner: "o1", order: { key: "sub-1" } }, answer)).toBe(true);
      expect(await claim(store, "n-2", "o2", T2)).toEqual({
        status: "claimed",
        id: "n-2",
        owner: "o2",
        order: { key: "sub-1", position: T2 },
        attempt: 1,
        previousPosition: T1,
      });
    });

    it("answers a notification older than the newest completed one as stale, and records it once", async () => {
      const store = await open();
      await run(store, "cancel", "o1", T2);
      expect(await claim(store, "renew", "o2", T1)).toEqual({
        status: "stale",
        id: "renew",
        owner: "o2",
        order: { key: "sub-1", position: T1 },
        attempt: 1,
        newestPosition: T2,
      });
      expect(await store.get({ id: "renew", order: { key: "sub-1" } })).toMatchObject({
        state: "processing",
        owner: "o2",
      });
      expect(
        await store.complete(
          { id: "renew", owner: "o2", order: { key: "sub-1" } },
          { processed: true, message: "stale" },
        ),
      ).toBe(true);
      // Completing the stale one does not move the position back.
      expect(await claim(store, "renew", "o3", T1)).toEqual({
        status: "completed",
        answer: { processed: true, message: "stale" },
      });
      expect(await claim(store, "later", "o4", T2)).toEqual({
        status: "claimed",
        id: "later",
        owner: "o4",
        order: { key: "sub-1", position: T2 },
        attempt: 1,
        previousPosition: T2,
      });
    });

    it("does not count an equal position as stale", async () => {
      const store = await open();
      await run(store, "n-1", "o1", T1);
      expect(await run(store, "n-2", "o2", T1)).toEqual({
        status: "claimed",
        id: "n-2",
        owner: "o2",
        order: { key: "sub-1", position: T1 },
        attempt: 1,
        previousPosition: T1,
      });
    });

    it("orders fractions of a second", async () => {
      const store = await open();
      await run(store, "n-1", "o1", T1_LATER_FRACTION);
      expect(await claim(store, "n-2", "o2", T1_HALF)).toMatchObject({
        status: "stale",
        newestPosition: T1_LATER_FRACTION,
      });
      expect(await claim(store, "n-3", "o3", T1)).toMatchObject({ status: "stale" });
      expect(await claim(store, "n-4", "o4", T2)).toMatchObject({
        status: "claimed",
        previousPosition: T1_LATER_FRACTION,
      });
    });

    it("holds one live claim per key: another notification of it waits, other keys run", async () => {
      const store = await open();
      expect(await claim(store, "n-1", "o1", T1)).toMatchObject({ status: "claimed" });
      const waiting = await claim(store, "n-2", "o2", T2);
      expect(waiting).toEqual({ status: "processing", retryAfterMs: expect.any(Number), key: true });
      expect((waiting as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(LEASE);
      expect(await store.get({ id: "n-2", order: { key: "sub-1" } })).toBeUndefined();
      expect(await claim(store, "m-1", "p1", T1, "sub-2")).toMatchObject({ status: "claimed" });
      expect(await store.complete({ id: "n-1", owner: "o1", order: { key: "sub-1" } }, answer)).toBe(true);
      expect(await claim(store, "n-2", "o2", T2)).toEqual({
        status: "claimed",
        id: "n-2",
        owner: "o2",
        order: { key: "sub-1", position: T2 },
        attempt: 1,
        previousPosition: T1,
      });
    });

    it("gives exactly one of many concurrent claims on one key", async () => {
      const store = await open();
      // A long lease: on a slow machine the last of them may arrive after a short one ran out.
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.claim({
            id: `n-${i}`,
            fingerprint: "f",
            owner: `o${i}`,
            leaseMs: 30_000,
            order: { key: "sub-1", position: T1 },
          }),
        ),
      );
      expect(results.filter((result) => result.status === "claimed")).toHaveLength(1);
      expect(results.filter((result) => result.status === "processing")).toHaveLength(19);
    });

    it("leaves the position where it was when a run fails, and frees the key", async () => {
      const store = await open();
      await run(store, "n-1", "o1", T1);
      await claim(store, "n-2", "o2", T2);
      expect(await store.fail({ id: "n-2", owner: "o2", order: { key: "sub-1" } }, "handler_failed")).toBe(true);
      expect(await claim(store, "n-3", "o3", T1_HALF)).toEqual({
        status: "claimed",
        id: "n-3",
        owner: "o3",
        order: { key: "sub-1", position: T1_HALF },
        attempt: 1,
        previousPosition: T1,
      });
      expect(await store.fail({ id: "n-3", owner: "o3", order: { key: "sub-1" } }, "handler_failed")).toBe(true);
      expect(await claim(store, "n-2", "o4", T2)).toEqual({
        status: "claimed",
        id: "n-2",
        owner: "o4",
        order: { key: "sub-1", position: T2 },
        attempt: 2,
        previousPosition: T1,
      });
    });

    it("answers a stale notification at once, even while the key is held", async () => {
      const store = await open();
      await run(store, "n-2", "o1", T2);
      await claim(store, "n-3", "o2", T2);
      expect(await claim(store, "n-1", "o3", T1)).toMatchObject({ status: "stale", newestPosition: T2 });
      // The stale claim does not hold the key: finishing it leaves the holder in place.
      expect(await store.complete({ id: "n-1", owner: "o3", order: { key: "sub-1" } }, answer)).toBe(true);
      expect(await claim(store, "n-4", "o4", T2)).toMatchObject({ status: "processing", key: true });
    });

    it("serialises notifications without a position, and never counts them stale", async () => {
      const store = await open();
      await run(store, "n-1", "o1", T2);
      expect(await claim(store, "n-2", "o2")).toEqual({
        status: "claimed",
        id: "n-2",
        owner: "o2",
        order: { key: "sub-1" },
        attempt: 1,
        previousPosition: T2,
      });
      expect(await claim(store, "n-3", "o3")).toMatchObject({ status: "processing", key: true });
      expect(await store.complete({ id: "n-2", owner: "o2", order: { key: "sub-1" } }, answer)).toBe(true);
      expect(await claim(store, "n-3", "o3", T2)).toEqual({
        status: "claimed",
        id: "n-3",
        owner: "o3",
        order: { key: "sub-1", position: T2 },
        attempt: 1,
        previousPosition: T2,
      });
    });

    it("frees a key whose holder's lease ran out; the old holder can no longer extend it", async () => {
      const store = await open();
      await claim(store, "n-1", "o1", T1);
      await advance(LEASE + 20);
      expect(await claim(store, "n-2", "o2", T2)).toMatchObject({ status: "claimed" });
      expect(await store.extend({ id: "n-1", owner: "o1", order: { key: "sub-1" } }, LEASE)).toBe(false);
      expect(await store.extend({ id: "n-2", owner: "o2", order: { key: "sub-1" } }, LEASE)).toBe(true);
    });

    it("keeps the key held while its holder extends the lease", async () => {
      const store = await open();
      await claim(store, "n-1", "o1", T1);
      await advance(100);
      expect(await store.extend({ id: "n-1", owner: "o1", order: { key: "sub-1" } }, 400)).toBe(true);
      await advance(100); // past the first lease, within the extended one
      const waiting = await claim(store, "n-2", "o2", T2);
      expect(waiting).toMatchObject({ status: "processing", key: true });
      expect((waiting as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(LEASE);
    });

    it("frees the key when a claim is handed to a queue or released; the worker checks the order again", async () => {
      const store = await open();
      await claim(store, "n-1", "r1", T1);
      expect(await store.markQueued({ id: "n-1", owner: "r1", order: { key: "sub-1" } })).toBe(true);
      expect(await claim(store, "n-2", "r2", T2)).toMatchObject({ status: "claimed" });
      // The queued one meets the key held by the newer notification, then finds itself stale.
      expect(await claim(store, "n-1", "w1", T1, "sub-1", true)).toMatchObject({ status: "processing", key: true });
      expect(await store.complete({ id: "n-2", owner: "r2", order: { key: "sub-1" } }, answer)).toBe(true);
      expect(await claim(store, "n-1", "w1", T1, "sub-1", true)).toEqual({
        status: "stale",
        id: "n-1",
        owner: "w1",
        order: { key: "sub-1", position: T1 },
        attempt: 2,
        newestPosition: T2,
      });

      await claim(store, "n-3", "r3", T2);
      expect(await store.release({ id: "n-3", owner: "r3", order: { key: "sub-1" } })).toBe(true);
      expect(await store.get({ id: "n-3", order: { key: "sub-1" } })).toBeUndefined();
      expect(await claim(store, "n-4", "r4", T2)).toMatchObject({ status: "claimed" });
    });

    const queueClaim = (store: IdempotencyStore, id: string, owner: string, position?: string) =>
      store.claim({
        id,
        fingerprint: `f-${id}`,
        owner,
        leaseMs: LEASE,
        kind: "append",
        order: position === undefined ? { key: "sub-1" } : { key: "sub-1", position },
      });
    const workerClaim = (store: IdempotencyStore, id: string, owner: string, position: string, handoffFrom?: string) =>
      store.claim({
        id,
        fingerprint: `f-${id}`,
        owner,
        leaseMs: LEASE,
        kind: "take",
        order: { key: "sub-1", position },
        ...(handoffFrom ? { handoffFrom } : {}),
      });
    const queued = async (store: IdempotencyStore, id: string, owner: string, position: string) => {
      const claimed = await queueClaim(store, id, owner, position);
      expect(claimed).toMatchObject({ status: "claimed", id });
      expect(await store.markQueued(claimed as ClaimHandle)).toBe(true);
    };

    it("accepts notifications for a queue without waiting for the key, and runs them in position order", async () => {
      const store = await open();
      expect(store.lanes?.takeNext).toBeTypeOf("function");
      await run(store, "n-0", "o0", T1);
      // The key is held; a claim for the queue does not wait for it.
      await claim(store, "n-held", "o-held", T1_HALF);
      await queued(store, "n-3", "r3", T2);
      await queued(store, "n-1", "r1", T1_HALF);
      await queued(store, "n-2", "r2", T1_LATER_FRACTION);
      expect(await store.complete({ id: "n-held", owner: "o-held", order: { key: "sub-1" } }, answer)).toBe(true);
      // The worker of n-3's job is handed the oldest waiting notification first.
      const first = await workerClaim(store, "n-3", "w1", T2);
      expect(first).toEqual({
        status: "claimed",
        id: "n-1",
        owner: "w1",
        order: { key: "sub-1", position: T1_HALF },
        // Its first run: joining the list (the receiver's claim) counted none.
        attempt: 1,
        previousPosition: T1_HALF,
      });
      expect(await store.get({ id: "n-3", order: { key: "sub-1" } })).toMatchObject({ state: "queued" });
      // Another worker meets the key held.
      expect(await workerClaim(store, "n-2", "w2", T1_LATER_FRACTION)).toMatchObject({
        status: "processing",
        key: true,
      });
      expect(await store.complete(first as ClaimHandle, answer)).toBe(true);
      const second = await store.lanes!.takeNext({ key: "sub-1" }, "w1b", LEASE);
      expect(second).toMatchObject({ status: "claimed", id: "n-2", previousPosition: T1_HALF });
      expect(await store.complete(second!, answer)).toBe(true);
      const third = await store.lanes!.takeNext({ key: "sub-1" }, "w1c", LEASE);
      expect(third).toMatchObject({ status: "claimed", id: "n-3", previousPosition: T1_LATER_FRACTION });
      expect(await store.lanes!.takeNext({ key: "sub-1" }, "w1d", LEASE)).toBeUndefined();
      expect(await store.complete(third!, answer)).toBe(true);
      expect(await store.lanes!.takeNext({ key: "sub-1" }, "w1e", LEASE)).toBeUndefined();
      expect(await workerClaim(store, "n-3", "w3", T2)).toEqual({ status: "completed", answer });
    });

    it("keeps the job data a mailbox claim carries: handed over in the claim, given to each worker it goes to until settled", async () => {
      const store = await open();
      const carriedClaim = (id: string, owner: string, position: string) =>
        store.claim({
          id,
          fingerprint: `f-${id}`,
          owner,
          leaseMs: LEASE,
          order: { key: "sub-1", position },
          kind: "append",
          carried: `data of ${id}`,
        });
      const first = await carriedClaim("n-1", "r1", T1);
      // A store without mailboxes claims as without data; its receiver marks the claim queued itself.
      if (!drainedLanes(store)) {
        expect(first).not.toHaveProperty("appended");
        return;
      }
      // Queued at once, and the key had no runner: its drain job is the caller's to queue.
      expect(first).toMatchObject({ status: "claimed", id: "n-1", appended: { wake: true } });
      expect(await store.get({ id: "n-1", order: { key: "sub-1" } })).toMatchObject({ state: "queued" });
      expect(await carriedClaim("n-2", "r2", T2)).toMatchObject({ status: "claimed", appended: { wake: false } });
      // A later delivery while it waits in the mailbox, which has a runner: a duplicate, no job to look for.
      expect(await carriedClaim("n-2", "r2b", T2)).toEqual({ status: "queued", inLane: true });
      // The drain job's worker runs its own notification from its job, then is handed the next with its data.
      const own = await workerClaim(store, "n-1", "w1", T1);
      expect(own).toMatchObject({ status: "claimed", id: "n-1" });
      expect(await store.complete(own as ClaimHandle, answer)).toBe(true);
      const next = await store.lanes!.takeNext({ key: "sub-1" }, "w1b", LEASE);
      expect(next).toMatchObject({ status: "claimed", id: "n-2", carried: "data of n-2" });
      // Its runner dies: the next runner gets it again, data and all.
      await advance(LEASE + 50);
      const again = await store.lanes!.takeNext({ key: "sub-1" }, "w2", LEASE);
      expect(again).toMatchObject({ status: "claimed", id: "n-2", owner: "w2", carried: "data of n-2" });
      expect(await store.complete(again!, answer)).toBe(true);
      expect(await store.lanes!.takeNext({ key: "sub-1" }, "w2b", LEASE)).toBeUndefined();
    });

    it("puts a worker's notification whose hold lapsed back in line: it runs before a newer one, not after as stale", async () => {
      const store = await open();
      await queued(store, "n-1", "r1", T1);
      await queued(store, "n-2", "r2", T2);
      // A worker takes n-1 and dies with it: its claim and its hold of the key lapse.
      expect(await workerClaim(store, "n-1", "w-dead", T1)).toMatchObject({ status: "claimed", id: "n-1" });
      await advance(LEASE + 50);
      // The worker of n-2's job is handed n-1 first.
      const first = await workerClaim(store, "n-2", "w2", T2);
      expect(first).toMatchObject({ status: "claimed", id: "n-1", owner: "w2" });
      expect(await store.complete({ id: "n-1", owner: "w-dead", order: { key: "sub-1" } }, answer)).toBe(false);
      expect(await store.complete(first as ClaimHandle, answer)).toBe(true);
      expect(await store.lanes!.takeNext({ key: "sub-1" }, "w2b", LEASE)).toMatchObject({
        status: "claimed",
        id: "n-2",
      });
    });

    it("puts it back in line for takeNext too", async () => {
      const store = await open();
      await queued(store, "n-1", "r1", T1);
      await queued(store, "n-2", "r2", T2);
      expect(await workerClaim(store, "n-1", "w-dead", T1)).toMatchObject({ status: "claimed", id: "n-1" });
      await advance(LEASE + 50);
      expect(await store.lanes!.takeNext({ key: "sub-1" }, "w3", LEASE)).toMatchObject({
        status: "claimed",
        id: "n-1",
      });
    });

    it("judges stale only a notification that arrives after a newer one completed", async () => {
      const store = await open();
      await queued(store, "n-2", "r2", T2);
      await queued(store, "n-1", "r1", T1);
      const first = await workerClaim(store, "n-2", "w1", T2);
      expect(first).toMatchObject({ status: "claimed", id: "n-1" });
      await store.complete(first as ClaimHandle, answer);
      const next = await store.lanes!.takeNext({ key: "sub-1" }, "w2", LEASE);
      expect(next).toMatchObject({ status: "claimed", id: "n-2" });
      await store.complete(next!, answer);
      expect(await queueClaim(store, "n-late", "r3", T1_HALF)).toMatchObject({ status: "stale", newestPosition: T2 });
    });

    it("lets a worker take over the receiver's claim its job names, before the receiver marks it queued", async () => {
      const store = await open();
      const receiver = await queueClaim(store, "n-1", "r1", T1);
      expect(receiver).toMatchObject({ status: "claimed" });
      expect(await workerClaim(store, "n-1", "w1", T1, "someone-else")).toMatchObject({ status: "processing" });
      const worker = await workerClaim(store, "n-1", "w1", T1, "r1");
      expect(worker).toMatchObject({ status: "claimed", id: "n-1", owner: "w1" });
      // The receiver's late step changes nothing.
      expect(await store.markQueued(receiver as ClaimHandle)).toBe(false);
      expect(await store.complete(worker as ClaimHandle, answer)).toBe(true);
      expect(await store.get({ id: "n-1", order: { key: "sub-1" } })).toMatchObject({
        state: "completed",
        owner: "w1",
      });
    });

    it("waits for an older notification still being handed to the queue, and drops one whose receiver died", async () => {
      const store = await open();
      await queueClaim(store, "n-1", "r1", T1); // not yet marked queued
      await queued(store, "n-2", "r2", T2);
      expect(await workerClaim(store, "n-2", "w1", T2)).toMatchObject({ status: "processing", key: true });
      await advance(LEASE + 20); // r1 died: its claim lapses
      expect(await workerClaim(store, "n-2", "w1", T2)).toMatchObject({ status: "claimed", id: "n-2" });
    });

    it("takes a released claim out of the waiting list", async () => {
      const store = await open();
      const refused = await queueClaim(store, "n-1", "r1", T1);
      expect(await store.release(refused as ClaimHandle)).toBe(true);
      await queued(store, "n-2", "r2", T2);
      expect(await workerClaim(store, "n-2", "w1", T2)).toMatchObject({ status: "claimed", id: "n-2" });
    });

    it("keeps the id checks first: a completed id is a duplicate or a conflict whatever its position", async () => {
      const store = await open();
      await run(store, "n-2", "o1", T2);
      expect(await claim(store, "n-2", "o2", T1)).toEqual({ status: "completed", answer });
      expect(
        await store.claim({
          id: "n-2",
          fingerprint: "other",
          owner: "o3",
          leaseMs: LEASE,
          order: { key: "sub-1", position: T2 },
        }),
      ).toEqual({
        status: "conflict",
      });
    });

    it("keeps keys apart whatever characters they hold", async () => {
      const store = await open();
      const keys = ["m:1/s:1", "{m}:1", "m}{1", "%7Bm%7D:1", "évt-١"];
      for (const [i, key] of keys.entries())
        expect(await claim(store, `n-${i}`, `o${i}`, T1, key)).toMatchObject({ status: "claimed" });
      for (const [i, key] of keys.entries())
        expect(await store.get({ id: `n-${i}`, order: { key: key } })).toMatchObject({
          state: "processing",
          owner: `o${i}`,
        });
    });
  });

  // Issue 30, item 12: "once per id" holds across order keys, as it does without ordering.
  describe(`${name}: one id sent under two order keys`, () => {
    const open = storesClosedAfterEach(makeStore);
    /** The id "n-1" claimed under `key` (the payload differs with the key, as a subscription would). */
    const claimUnder = (store: IdempotencyStore, key: string, owner: string, { take = false } = {}) =>
      store.claim({
        kind: take ? "take" : "run",
        id: "n-1",
        fingerprint: `f-${key}`,
        owner,
        leaseMs: LEASE,
        order: { key, position: T1 },
      });

    it("answers a conflict (422) once it completed under the first key, whatever the second key's record", async () => {
      const store = await open();
      expect(await claimUnder(store, "sub-a", "o1")).toMatchObject({ status: "claimed" });
      expect(await store.complete({ id: "n-1", owner: "o1", order: { key: "sub-a" } }, answer)).toBe(true);
      expect(await claimUnder(store, "sub-b", "o2")).toEqual({ status: "conflict" });
      expect(await claimUnder(store, "sub-b", "o3", { take: true })).toEqual({ status: "conflict" });
      // The first payload is still a duplicate, answered as before.
      expect(
        await store.claim({ id: "n-1", fingerprint: "f-sub-a", owner: "o4", leaseMs: LEASE, order: { key: "sub-a" } }),
      ).toEqual({ status: "completed", answer });
    });

    it("answers 409 while the first key's claim is live, and lets the second take over once it failed", async () => {
      const store = await open();
      expect(await claimUnder(store, "sub-a", "o1")).toMatchObject({ status: "claimed" });
      expect(await claimUnder(store, "sub-b", "o2")).toEqual({
        status: "processing",
        retryAfterMs: expect.any(Number),
      });
      expect(await store.fail({ id: "n-1", owner: "o1", order: { key: "sub-a" } }, "handler_failed")).toBe(true);
      expect(await claimUnder(store, "sub-b", "o3")).toMatchObject({ status: "claimed", owner: "o3" });
      expect(await store.complete({ id: "n-1", owner: "o3", order: { key: "sub-b" } }, answer)).toBe(true);
      // Now the first key's payload is the different one.
      expect(await claimUnder(store, "sub-a", "o4")).toEqual({ status: "conflict" });
    });
  });
}
