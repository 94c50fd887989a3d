import type { ClaimRequest } from "merchant-webhooks";
import { describe, expectTypeOf, it } from "vitest";

const base = { id: "n-1", fingerprint: "f", owner: "o", leaseMs: 1_000 };
const order = { key: "sub-1", position: "2026-03-01T00:00:00Z" };

describe("ClaimRequest: each named claim takes only its own options", () => {
  it("accepts every claim a receiver, a worker or the console makes", () => {
    const claims: ClaimRequest[] = [
      base,
      { ...base, kind: "run", order },
      { ...base, kind: "run", carried: "{}" },
      { ...base, kind: "enqueue", queueAtClaim: true, takeOver: true },
      { ...base, kind: "append", order, carried: "{}", takeOver: true },
      { ...base, kind: "take", order, handoffFrom: "r", attempt: 2 },
    ];
    expectTypeOf(claims).toEqualTypeOf<ClaimRequest[]>();
  });

  it("refuses the flag combinations that meant nothing", () => {
    // @ts-expect-error an ordered notification for a queue is an append
    const enqueueInOrder: ClaimRequest = { ...base, kind: "enqueue", order };
    // @ts-expect-error an append joins a key's lane: it needs the order
    const appendWithoutOrder: ClaimRequest = { ...base, kind: "append" };
    // @ts-expect-error a hand-off is a worker's take's alone
    const runHandedOver: ClaimRequest = { ...base, kind: "run", handoffFrom: "r" };
    // @ts-expect-error queued at claim is an unordered enqueue's
    const appendQueuedAtClaim: ClaimRequest = { ...base, kind: "append", order, queueAtClaim: true };
    // @ts-expect-error job data goes with an append
    const takeCarrying: ClaimRequest = { ...base, kind: "take", carried: "{}" };
    // @ts-expect-error the flags are gone from the named claims (see ClaimFlags)
    const flags: ClaimRequest = { ...base, takeQueued: true };
    expectTypeOf([
      enqueueInOrder,
      appendWithoutOrder,
      runHandedOver,
      appendQueuedAtClaim,
      takeCarrying,
      flags,
    ]).toBeArray();
  });
});
