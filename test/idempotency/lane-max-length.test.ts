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

describe("a store's lane bound: laneMaxLength, and its deprecated name mailboxMaxLength", () => {
  it("bounds a lane by laneMaxLength, or by mailboxMaxLength alone, or by both when they agree", async () => {
    expect(await appendsTaken(memoryStore({ laneMaxLength: 2 }))).toBe(2);
    expect(await appendsTaken(memoryStore({ mailboxMaxLength: 3 }))).toBe(3);
    expect(await appendsTaken(memoryStore({ laneMaxLength: 4, mailboxMaxLength: 4 }))).toBe(4);
  });

  it.each([
    ["memoryStore", () => memoryStore({ laneMaxLength: 2, mailboxMaxLength: 3 })],
    ["redisStore", () => redisStore({ connection: REDIS_URL, laneMaxLength: 2, mailboxMaxLength: 3 })],
  ])("%s: refuses both names set to different values, naming the deprecated one", (_, make) => {
    expect(make).toThrow(
      expect.objectContaining({
        code: "MW_INVALID_OPTION",
        option: "mailboxMaxLength",
        message: expect.stringMatching(/laneMaxLength \(2\) and its deprecated name mailboxMaxLength \(3\) differ/),
      }),
    );
  });
});
