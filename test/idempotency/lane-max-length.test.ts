import { type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { describe, expect, it } from "vitest";
import { REDIS_URL } from "../support/redis.js";

/** Appends to one subscription's lane until one is refused; how many the lane took. */
async function appendsTaken(store: IdempotencyStore): Promise<number> {
  for (let i = 0; i < 10; i++) {
    const claim = await store.claim({
      kind: "append",
      id: `n-${i}`,
      fingerprint: "f",
      owner: `r-${i}`,
      leaseMs: 30_000,
      order: { key: "sub-1", position: `2026-03-01T00:00:0${i}Z` },
    });
    if (claim.status === "processing" && claim.full) return i;
    expect(claim.status).toBe("claimed");
  }
  return Number.POSITIVE_INFINITY;
}

describe("a store's lane bound: laneMaxLength", () => {
  it("bounds a lane by laneMaxLength", async () => {
    expect(await appendsTaken(memoryStore({ laneMaxLength: 2 }))).toBe(2);
    const redis = redisStore({
      connection: REDIS_URL,
      prefix: `lane-max-${process.pid}-${Date.now()}:`,
      laneMaxLength: 3,
    });
    try {
      expect(await appendsTaken(redis)).toBe(3);
    } finally {
      await redis.close?.();
    }
  });

  it.each([
    ["memoryStore", () => memoryStore({ mailboxMaxLength: 3 } as never)],
    ["redisStore", () => redisStore({ connection: REDIS_URL, mailboxMaxLength: 3 } as never)],
  ])("%s: refuses the lane bound's unreleased first name, mailboxMaxLength, as an unknown option", (_, make) => {
    expect(make).toThrow(expect.objectContaining({ code: "MW_UNKNOWN_OPTION" }));
  });
});
