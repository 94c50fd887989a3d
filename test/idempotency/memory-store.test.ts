import { memoryStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";

const answer = { processed: true, message: "processed" };

describe("memoryStore", () => {
  it("expires a processing lease, letting another owner take over; the old owner then changes nothing", () => {
    let now = 1_000;
    const store = memoryStore({ now: () => now });
    expect(store.claim({ id: "a", fingerprint: "f", owner: "o1", leaseMs: 100 })).toEqual({
      status: "claimed",
      id: "a",
      owner: "o1",
      attempt: 1,
    });
    expect(store.claim({ id: "a", fingerprint: "f", owner: "o2", leaseMs: 100 })).toEqual({
      status: "processing",
      retryAfterMs: 100,
    });
    now += 101;
    expect(store.claim({ id: "a", fingerprint: "f", owner: "o2", leaseMs: 100 })).toEqual({
      status: "claimed",
      id: "a",
      owner: "o2",
      attempt: 2,
    });
    expect(store.complete({ id: "a", owner: "o1" }, answer)).toBe(false);
    expect(store.extend({ id: "a", owner: "o1" }, 100)).toBe(false);
    expect(store.fail({ id: "a", owner: "o1" }, "late")).toBe(false);
    expect(store.complete({ id: "a", owner: "o2" }, answer)).toBe(true);
    expect(store.get("a")).toMatchObject({ state: "completed", owner: "o2", attempts: 2, answer });
  });

  it("extends a lease for its owner only", () => {
    let now = 0;
    const store = memoryStore({ now: () => now });
    store.claim({ id: "a", fingerprint: "f", owner: "o1", leaseMs: 100 });
    now = 90;
    expect(store.extend({ id: "a", owner: "o1" }, 100)).toBe(true);
    now = 150;
    expect(store.claim({ id: "a", fingerprint: "f", owner: "o2", leaseMs: 100 })).toMatchObject({
      status: "processing",
    });
  });

  it("answers a completed id with its stored answer, and a different payload as a conflict", () => {
    const store = memoryStore();
    store.claim({ id: "a", fingerprint: "f", owner: "o1", leaseMs: 100 });
    store.complete({ id: "a", owner: "o1" }, answer);
    expect(store.claim({ id: "a", fingerprint: "f", owner: "o2", leaseMs: 100 })).toEqual({
      status: "completed",
      answer,
    });
    expect(store.claim({ id: "a", fingerprint: "other", owner: "o2", leaseMs: 100 })).toEqual({ status: "conflict" });
  });

  it("lets a failed record be claimed again and counts attempts", () => {
    const store = memoryStore();
    store.claim({ id: "a", fingerprint: "f", owner: "o1", leaseMs: 100 });
    store.fail({ id: "a", owner: "o1" }, "handler_failed");
    expect(store.get("a")).toMatchObject({ state: "failed", error: "handler_failed", attempts: 1 });
    expect(store.claim({ id: "a", fingerprint: "f", owner: "o2", leaseMs: 100 })).toEqual({
      status: "claimed",
      id: "a",
      owner: "o2",
      attempt: 2,
    });
  });

  it("keeps queued records for workers: receivers see them as accepted, workers take them over", () => {
    const store = memoryStore();
    store.claim({ id: "a", fingerprint: "f", owner: "r", leaseMs: 100 });
    expect(store.markQueued({ id: "a", owner: "r" })).toBe(true);
    expect(store.claim({ id: "a", fingerprint: "f", owner: "r2", leaseMs: 100 })).toEqual({ status: "queued" });
    expect(store.claim({ kind: "take", id: "a", fingerprint: "f", owner: "w", leaseMs: 100 })).toEqual({
      status: "claimed",
      id: "a",
      owner: "w",
      attempt: 2,
    });
  });

  it("forgets records after the retention period", () => {
    let now = 0;
    const store = memoryStore({ now: () => now, retentionSeconds: 10 });
    store.claim({ id: "a", fingerprint: "f", owner: "o1", leaseMs: 100 });
    store.complete({ id: "a", owner: "o1" }, answer);
    now = 10_001;
    expect(store.get("a")).toBeUndefined();
    expect(store.claim({ id: "a", fingerprint: "g", owner: "o2", leaseMs: 100 })).toEqual({
      status: "claimed",
      id: "a",
      owner: "o2",
      attempt: 1,
    });
  });

  it("stays within maxEntries, dropping the least recently written records", () => {
    const store = memoryStore({ maxEntries: 1_000 });
    for (let i = 0; i < 10_000; i++) {
      store.claim({ id: `n${i}`, fingerprint: "f", owner: "o", leaseMs: 100 });
      store.complete({ id: `n${i}`, owner: "o" }, answer);
    }
    expect(store.size).toBe(1_000);
    expect(store.get("n0")).toBeUndefined();
    expect(store.get("n9999")).toMatchObject({ state: "completed" });
  });

  it("evicts by last write: a record claimed again goes behind records written after its first claim", () => {
    const store = memoryStore({ maxEntries: 3 });
    for (const id of ["a", "b", "c"]) {
      store.claim({ id, fingerprint: "f", owner: "o", leaseMs: 100 });
      store.fail({ id, owner: "o" }, "handler_failed");
    }
    store.claim({ id: "a", fingerprint: "f", owner: "o2", leaseMs: 100 });
    store.complete({ id: "a", owner: "o2" }, answer);
    store.claim({ id: "d", fingerprint: "f", owner: "o", leaseMs: 100 });
    expect(store.get("b")).toBeUndefined();
    expect(store.get("a")).toMatchObject({ state: "completed", attempts: 2 });
    expect(store.get("c")).toMatchObject({ state: "failed" });
    expect(store.size).toBe(3);
  });

  it("shows a settled record without the fields its claim had", () => {
    const store = memoryStore();
    store.claim({ id: "a", fingerprint: "f", owner: "o", leaseMs: 100 });
    store.complete({ id: "a", owner: "o" }, answer);
    expect(store.get("a")).toStrictEqual({ state: "completed", fingerprint: "f", owner: "o", attempts: 1, answer });
  });

  it("releases a claim so a redelivery starts afresh", () => {
    const store = memoryStore();
    store.claim({ id: "a", fingerprint: "f", owner: "o1", leaseMs: 100 });
    expect(store.release({ id: "a", owner: "other" })).toBe(false);
    expect(store.release({ id: "a", owner: "o1" })).toBe(true);
    expect(store.get("a")).toBeUndefined();
  });

  it("never evicts a claim in progress to make room: a redelivery of a slow notification still meets 409", () => {
    const store = memoryStore({ maxEntries: 100 });
    expect(store.claim({ id: "slow", fingerprint: "f", owner: "o1", leaseMs: 60_000 })).toEqual({
      status: "claimed",
      id: "slow",
      owner: "o1",
      attempt: 1,
    });
    for (let i = 0; i < 1_000; i++) {
      store.claim({ id: `n${i}`, fingerprint: "f", owner: "o", leaseMs: 100 });
      store.complete({ id: `n${i}`, owner: "o" }, answer);
    }
    expect(store.size).toBe(100);
    expect(store.claim({ id: "slow", fingerprint: "f", owner: "o2", leaseMs: 60_000 })).toMatchObject({
      status: "processing",
    });
    expect(store.complete({ id: "slow", owner: "o1" }, answer)).toBe(true);
  });

  it("keeps queued records through eviction too", () => {
    const store = memoryStore({ maxEntries: 10 });
    store.claim({ id: "q", fingerprint: "f", owner: "r", leaseMs: 100 });
    store.markQueued({ id: "q", owner: "r" });
    for (let i = 0; i < 100; i++) {
      store.claim({ id: `n${i}`, fingerprint: "f", owner: "o", leaseMs: 100 });
      store.complete({ id: `n${i}`, owner: "o" }, answer);
    }
    expect(store.get("q")).toMatchObject({ state: "queued" });
  });

  it("refuses a new claim as unavailable when only claims in progress are left to evict, and accepts again once one ends", () => {
    const store = memoryStore({ maxEntries: 3 });
    for (const id of ["a", "b", "c"])
      expect(store.claim({ id, fingerprint: "f", owner: id, leaseMs: 60_000 })).toMatchObject({ status: "claimed" });
    expect(() => store.claim({ id: "d", fingerprint: "f", owner: "d", leaseMs: 60_000 })).toThrow(
      /full of claims in progress/,
    );
    expect(store.get("d")).toBeUndefined();
    for (const id of ["a", "b", "c"]) expect(store.get(id)).toMatchObject({ state: "processing", owner: id });
    store.complete({ id: "a", owner: "a" }, answer);
    expect(store.claim({ id: "d", fingerprint: "f", owner: "d", leaseMs: 60_000 })).toMatchObject({
      status: "claimed",
    });
    expect(store.get("a")).toBeUndefined();
  });

  it("stays within maxBytes whatever the size of the ids", () => {
    const store = memoryStore({ maxBytes: 1_000_000 });
    const longId = (i: number) => `${i}-${"x".repeat(10_000)}`;
    for (let i = 0; i < 500; i++) {
      store.claim({ id: longId(i), fingerprint: "f", owner: "o", leaseMs: 100 });
      store.complete({ id: longId(i), owner: "o" }, answer);
    }
    expect(store.bytes).toBeLessThanOrEqual(1_000_000);
    expect(store.size).toBeLessThan(50);
    expect(store.get(longId(499))).toMatchObject({ state: "completed" });
  });

  it("keeps the default byte cap of 64 MiB", () => {
    const store = memoryStore();
    const id = "y".repeat(100_000);
    for (let i = 0; i < 400; i++) {
      store.claim({ id: `${i}${id}`, fingerprint: "f", owner: "o", leaseMs: 100 });
      store.complete({ id: `${i}${id}`, owner: "o" }, answer);
    }
    expect(store.bytes).toBeLessThanOrEqual(64 * 1024 * 1024);
    expect(store.size).toBeLessThan(400);
  });
});

describe("memoryStore order keys", () => {
  const order = (key: string, position: string) => ({ key, position });

  it("stays bounded in keys, forgetting the oldest settled key's position first", () => {
    const store = memoryStore({ maxEntries: 10 });
    for (let i = 0; i < 50; i++) {
      const key = `sub-${i}`;
      store.claim({
        id: `n-${i}`,
        fingerprint: "f",
        owner: `o${i}`,
        leaseMs: 100,
        order: order(key, "2026-03-01T03:00:00"),
      });
      store.complete({ id: `n-${i}`, owner: `o${i}`, order: { key: key } }, answer);
    }
    // The newest key still knows its position; the first one was dropped, so an older notification runs.
    expect(
      store.claim({
        id: "late-49",
        fingerprint: "f",
        owner: "x",
        leaseMs: 100,
        order: order("sub-49", "2026-03-01T02:00:00"),
      }),
    ).toMatchObject({
      status: "stale",
    });
    expect(
      store.claim({
        id: "late-0",
        fingerprint: "f",
        owner: "y",
        leaseMs: 100,
        order: order("sub-0", "2026-03-01T02:00:00"),
      }),
    ).toEqual({
      status: "claimed",
      id: "late-0",
      owner: "y",
      order: order("sub-0", "2026-03-01T02:00:00"),
      attempt: 1,
    });
  });

  it("never drops a key held by a live claim to make room", () => {
    const store = memoryStore({ maxEntries: 10 });
    store.claim({
      id: "held",
      fingerprint: "f",
      owner: "holder",
      leaseMs: 60_000,
      order: order("sub-held", "2026-03-01T02:00:00"),
    });
    for (let i = 0; i < 50; i++) {
      store.claim({
        id: `n-${i}`,
        fingerprint: "f",
        owner: `o${i}`,
        leaseMs: 100,
        order: order(`sub-${i}`, "2026-03-01T02:00:00"),
      });
      store.complete({ id: `n-${i}`, owner: `o${i}`, order: { key: `sub-${i}` } }, answer);
    }
    expect(
      store.claim({
        id: "next",
        fingerprint: "f",
        owner: "z",
        leaseMs: 100,
        order: order("sub-held", "2026-03-01T03:00:00"),
      }),
    ).toMatchObject({
      status: "processing",
      key: true,
    });
  });
});
