import { type IdempotencyStore, memoryStore, StoreUnavailableError } from "merchant-webhooks";

/** A store that claims but never takes a completion: the receiver keeps retrying it in the background. */
export function storeThatCannotComplete(): IdempotencyStore {
  const store = memoryStore();
  return {
    claim: (request) => store.claim(request),
    extend: (claim, leaseMs) => store.extend(claim, leaseMs),
    complete: () => Promise.reject(new StoreUnavailableError("connection refused")),
    fail: (claim, error) => store.fail(claim, error),
    markQueued: (claim) => store.markQueued(claim),
    release: (claim) => store.release(claim),
    get: (record) => store.get(record),
  };
}
