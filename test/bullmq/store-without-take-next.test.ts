import { type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { createWorker } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { REDIS_URL, uniquePrefix } from "../support/redis.js";

/** A store wrapper as a user might write one (adding metrics, say) that forgets `takeNext`. */
function wrapperWithoutTakeNext(store: IdempotencyStore): IdempotencyStore {
  return {
    claim: (request) => store.claim(request),
    extend: (claim, leaseMs) => store.extend(claim, leaseMs),
    complete: (claim, answer) => store.complete(claim, answer),
    fail: (claim, error) => store.fail(claim, error),
    markQueued: (claim) => store.markQueued(claim),
    release: (claim) => store.release(claim),
    get: (record) => store.get(record),
  };
}

async function warningsOf(idempotency: IdempotencyStore): Promise<string[]> {
  const { logger, lines } = captureLogger();
  const worker = createWorker({
    connection: REDIS_URL,
    name: "take-next",
    prefix: uniquePrefix("take-next"),
    idempotency,
    logger,
    sweepQueuedEveryMs: 0,
    onRenew: () => {},
  });
  await worker.close({ timeoutMs: 1_000 });
  return lines()
    .filter((line) => line.level === 40)
    .map((line) => String(line.msg));
}

describe("createWorker given a store that cannot hand a subscription on", () => {
  it("warns at start that ordered backlogs then drain one per lease, and names the fix", async () => {
    const warnings = await warningsOf(wrapperWithoutTakeNext(memoryStore()));
    expect(warnings.filter((msg) => msg.includes("no takeNext"))).toHaveLength(1);
    expect(warnings.find((msg) => msg.includes("no takeNext"))).toContain("must pass takeNext through");
  });

  it("says nothing of it for a store of this package", async () => {
    const warnings = await warningsOf(memoryStore());
    expect(warnings.filter((msg) => msg.includes("takeNext"))).toEqual([]);
  });
});
