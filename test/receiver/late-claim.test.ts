import { createReceiver, type IdempotencyStore, memoryStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A memory store whose first claim is answered only when `release` resolves, after the claim was taken;
 * `taken` is called once that claim is in the store, so the test counts the lease from there and not
 * from the request (intake alone can take longer than a lease's slack on a loaded machine).
 */
function storeWithLateFirstClaim(release: Promise<void>, taken: () => void): IdempotencyStore {
  const store = memoryStore();
  let first = true;
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== "claim" || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const answer = await value.apply(target, args);
        if (first) {
          first = false;
          taken();
          await release;
        }
        return answer;
      };
    },
  });
}

describe("a receiver whose claim is answered after its lease lapsed", () => {
  it("does not start the handler under it: the delivery that took the id over runs it, once", async () => {
    const runs: number[] = [];
    let answerLateClaim = () => {};
    let firstClaimTaken = () => {};
    const claimTaken = new Promise<void>((resolve) => (firstClaimTaken = resolve));
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: storeWithLateFirstClaim(
        new Promise<void>((resolve) => (answerLateClaim = resolve)),
        firstClaimTaken,
      ),
      // Long enough that the takeover's own claim keeps half its lease on a loaded machine, where a
      // 100 ms stall between its claim and its handler is common.
      leaseMs: 1_500,
      handlerTimeoutMs: 50,
      onRenew: async (_n, ctx) => {
        runs.push(ctx.attempt);
      },
    });
    const body = json(notification());
    const late = receiver.handle(post(body));
    // The first claim's lease lapses while its answer is held back; a redelivery takes it over.
    await claimTaken;
    await sleep(1_600);
    const takeover = await receiver.handle(post(body));
    expect(takeover.status).toBe(200);
    answerLateClaim();
    const first = await late;
    expect(first.status).toBe(409);
    expect(JSON.parse(first.body)).toMatchObject({ processed: false });
    expect(runs).toHaveLength(1);
    // The sender's retry of the late delivery finds the id completed.
    expect((await receiver.handle(post(body))).status).toBe(200);
    expect(runs).toHaveLength(1);
  });
});
