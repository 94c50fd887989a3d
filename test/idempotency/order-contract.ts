import { afterEach, describe, expect, it } from "vitest";
import type { ClaimResult, IdempotencyStore } from "../../src/idempotency/store.js";
import type { AdvanceTime, MakeStore } from "./store-contract.js";

const LEASE = 150;
const answer = { processed: true, message: "processed" };
// Sortable positions (see src/ordering/position.ts): the store compares them as they are.
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
    let opened: IdempotencyStore[] = [];
    afterEach(async () => {
      for (const store of opened) await store.close?.();
      opened = [];
    });
    const open = async () => {
      const store = await makeStore({});
      opened.push(store);
      return store;
    };
    const claim = (
      store: IdempotencyStore,
      id: string,
      owner: string,
      position?: string,
      key = "sub-1",
      takeQueued = false,
    ) =>
      store.claim({
        id,
        fingerprint: `f-${id}`,
        owner,
        leaseMs: LEASE,
        order: position === undefined ? { key } : { key, position },
        ...(takeQueued ? { takeQueued } : {}),
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
}
