import type { IdempotencyStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { type AdvanceTime, type MakeStore, storesClosedAfterEach } from "./store-contract.js";

const LEASE = 150;

/**
 * A receiver's unordered claim for a durable queue (`queueAtClaim`), in the stores that write the
 * record queued in the claim itself: until the claim's hand-off lease lapses, a duplicate that finds
 * no job yet is told the notification is in progress, never handed it; workers take it at once.
 */
export function queueAtClaimContract(name: string, makeStore: MakeStore, advanceTime?: AdvanceTime): void {
  const advance = advanceTime ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  describe(`${name}: queued at claim`, () => {
    const open = storesClosedAfterEach(makeStore);
    const forQueue = (store: IdempotencyStore, owner: string, takeOver = false) =>
      store.claim({
        kind: "enqueue",
        id: "n-1",
        fingerprint: "f",
        owner,
        leaseMs: LEASE,
        queueAtClaim: true,
        ...(takeOver ? { takeOver } : {}),
      });

    it("writes the record queued under a hand-off lease a receiver's take-over waits out", async () => {
      const store = await open();
      expect(await forQueue(store, "r1")).toEqual({
        status: "claimed",
        id: "n-1",
        owner: "r1",
        attempt: 1,
        queued: true,
      });
      expect(await store.get("n-1")).toMatchObject({ state: "queued", owner: "r1", leaseUntil: expect.any(Number) });
      // A redelivery sees it accepted; taking it over (its job missing) waits for the hand-off.
      expect(await forQueue(store, "r2")).toEqual({ status: "queued" });
      const early = await forQueue(store, "r2", true);
      expect(early).toEqual({ status: "processing", retryAfterMs: expect.any(Number) });
      expect((early as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(LEASE);
      await advance(LEASE + 20);
      expect(await forQueue(store, "r2", true)).toEqual({
        status: "claimed",
        id: "n-1",
        owner: "r2",
        attempt: 2,
        queued: true,
      });
      // The first receiver lost it: its release (a refused add) changes nothing.
      expect(await store.release({ id: "n-1", owner: "r1" })).toBe(false);
    });

    it("lets a worker take it during the hand-off, and its receiver release it when the add is refused", async () => {
      const store = await open();
      await forQueue(store, "r1");
      expect(await store.claim({ kind: "take", id: "n-1", fingerprint: "f", owner: "w", leaseMs: LEASE })).toEqual({
        status: "claimed",
        id: "n-1",
        owner: "w",
        attempt: 2,
      });
      expect(await store.complete({ id: "n-1", owner: "w" }, { processed: true, message: "ok" })).toBe(true);

      const other = await open();
      await forQueue(other, "r1");
      expect(await other.release({ id: "n-1", owner: "r1" })).toBe(true);
      expect(await other.get("n-1")).toBeUndefined();
      expect(await forQueue(other, "r2")).toMatchObject({ status: "claimed", attempt: 1, queued: true });
    });

    it("ends the hand-off lease for its owner alone, so a redelivery takes the record over at once", async () => {
      const store = await open();
      await forQueue(store, "r1");
      expect(await store.extend({ id: "n-1", owner: "r2" }, 0)).toBe(false);
      expect(await forQueue(store, "r2", true)).toMatchObject({ status: "processing" });
      // What a receiver whose claim got no answer in time does, so the sender's retry is not held up.
      expect(await store.extend({ id: "n-1", owner: "r1" }, 0)).toBe(true);
      expect(await forQueue(store, "r2", true)).toMatchObject({ status: "claimed", owner: "r2", attempt: 2 });
    });
  });
}
