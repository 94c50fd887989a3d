import { type ClaimFlags, type ClaimRequest, claimFlags, memoryStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";

const base = { id: "n-1", fingerprint: "f", owner: "o", leaseMs: 1_000 };
const order = { key: "sub-1", position: "2026-03-01T00:00:00Z" };

describe("named claims and the mode flags the built-in stores' scripts and SQL take", () => {
  it.each<[string, ClaimRequest, ClaimFlags]>([
    ["run", { ...base, kind: "run", order }, { ...base, order }],
    [
      "enqueue",
      { ...base, kind: "enqueue", queueAtClaim: true, takeOver: true },
      { ...base, forQueue: true, queueAtClaim: true, takeQueued: true },
    ],
    ["append", { ...base, kind: "append", order, carried: "{}" }, { ...base, forQueue: true, order, carried: "{}" }],
    [
      "take",
      { ...base, kind: "take", order, handoffFrom: "r", attempt: 2 },
      { ...base, takeQueued: true, order, handoffFrom: "r", attempt: 2 },
    ],
  ])("%s: claimFlags gives the flags it means", (_, named, flags) => {
    expect(claimFlags(named)).toEqual(flags);
  });

  it("a built-in store reads a request without `kind` that carries flags as the flags said (JavaScript written before)", () => {
    const store = memoryStore();
    expect(store.claim({ ...base, owner: "r" })).toMatchObject({ status: "claimed" });
    expect(store.markQueued({ id: "n-1", owner: "r" })).toBe(true);
    expect(store.claim({ ...base, owner: "r2" })).toEqual({ status: "queued" });
    const legacyTake = { ...base, owner: "w", takeQueued: true } as ClaimFlags as ClaimRequest;
    expect(store.claim(legacyTake)).toEqual({ status: "claimed", id: "n-1", owner: "w", attempt: 2 });
  });
});
