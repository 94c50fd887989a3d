import type { IdempotencyStore } from "../../src/idempotency/store.js";

/**
 * `store`, calling `completed(id)` after each completion it records (including ones retried in the
 * background), so a test process can journal exactly which notifications it saw through.
 */
export function onCompletion(store: IdempotencyStore, completed: (id: string) => Promise<unknown>): IdempotencyStore {
  return {
    leaseMs: store.leaseMs,
    claim: (request) => store.claim(request),
    extend: (id, owner, lease) => store.extend(id, owner, lease),
    async complete(id, owner, answer) {
      const done = await store.complete(id, owner, answer);
      if (done) await completed(id);
      return done;
    },
    fail: (id, owner, error) => store.fail(id, owner, error),
    markQueued: (id, owner) => store.markQueued(id, owner),
    release: (id, owner) => store.release(id, owner),
    get: (id) => store.get(id),
  };
}
