import type { IdempotencyStore } from "../idempotency/store.js";
import type { RedisConnection } from "../redis/connect.js";
import { redisStore } from "../redis/index.js";

export interface WorkerStore {
  store: IdempotencyStore;
  /** Closes a store made here; one given in the options is left to its owner. */
  closeStore: () => Promise<void>;
}

/** The worker's store: the one given, else the one its receivers share on the same Redis. */
export function workerStore(options: { idempotency?: IdempotencyStore; connection: RedisConnection }): WorkerStore {
  return options.idempotency
    ? { store: options.idempotency, closeStore: async () => {} }
    : sharedStore(options.connection);
}

/**
 * The default store: the one receivers reach with `redisStore({ connection })` on the same Redis
 * (default prefix). A lent client goes to the store as it is; a URL, options or nodes get the store's
 * fail-fast settings underneath, on a connection closed with the worker.
 */
function sharedStore(connection: RedisConnection): WorkerStore {
  const store = redisStore({ connection });
  return { store, closeStore: () => store.close() };
}
