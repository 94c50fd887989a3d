import { Cluster, Redis } from "ioredis";
import type { IdempotencyStore } from "../idempotency/store.js";
import type { RedisConnection } from "../redis/clients.js";
import { failFastRedisOptions, redisStore } from "../redis/index.js";

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
 * The default store: the one receivers reach with `redisStore({ redis })` on the same Redis (default
 * prefix). A URL or a lent client goes to the store as it is; options get the store's fail-fast
 * settings underneath, on a connection closed with the worker.
 */
function sharedStore(connection: RedisConnection): WorkerStore {
  if (typeof connection === "string" || connection instanceof Redis || connection instanceof Cluster) {
    const store = redisStore({ redis: connection });
    return { store, closeStore: () => store.close() };
  }
  const client = new Redis({ ...failFastRedisOptions(), ...connection });
  const store = redisStore({ redis: client });
  return {
    store,
    async closeStore() {
      await store.close();
      client.disconnect();
    },
  };
}
