import type { IdempotencyStore } from "merchant-webhooks";

/**
 * `store`, calling `completed(id)` after each completion it records (including ones retried in the
 * background), so a test process can journal exactly which notifications it saw through. Every call
 * passes all its arguments on.
 */
export function onCompletion(store: IdempotencyStore, completed: (id: string) => Promise<unknown>): IdempotencyStore {
  return {
    leaseMs: store.leaseMs,
    claim: (request) => store.claim(request),
    extend: (...args) => store.extend(...args),
    async complete(...args) {
      const done = await store.complete(...args);
      if (done) await completed(args[0].id);
      return done;
    },
    fail: (...args) => store.fail(...args),
    markQueued: (...args) => store.markQueued(...args),
    release: (...args) => store.release(...args),
    get: (...args) => store.get(...args),
    // Without them a worker could not hand a subscription's next notification over in order. Not the
    // lanes kept whole: their completion with a hand-on would complete past this wrapper.
    ...(store.lanes
      ? { lanes: { takeNext: store.lanes.takeNext, heldBy: store.lanes.heldBy, heldLanes: store.lanes.heldLanes } }
      : {}),
  };
}
