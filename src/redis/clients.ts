import { Cluster, Redis, type RedisOptions } from "ioredis";

/** How a Redis connection may be given: an ioredis client or cluster, a URL, or ioredis options. */
export type RedisConnection = Redis | Cluster | string | RedisOptions;

/** A client, and whether it was made here (and so is closed here) or lent by the caller. */
export interface ConnectionHandle {
  client: Redis | Cluster;
  owned: boolean;
}

/**
 * Producer settings: a receiver must answer 503 at once when Redis is down rather than hold the
 * request while ioredis queues commands for a reconnection (BullMQ's "failing fast when Redis is
 * down"), so there is no offline queue, one retry, and a bound on each command.
 */
const PRODUCER_DEFAULTS: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  commandTimeout: 5_000,
};

/**
 * Worker settings as BullMQ requires them: a worker waits in blocking commands and must ride out a
 * Redis restart, so commands are never given up on (`maxRetriesPerRequest: null`) and never timed out.
 */
const WORKER_REQUIRED = { maxRetriesPerRequest: null, enableOfflineQueue: true, commandTimeout: undefined } as const;

/**
 * Recorder settings: a recording is a convenience, so its connection gives up quickly rather than
 * holding memory for a Redis that is away; each failed write is logged and the answer is unaffected.
 */
export const RECORDER_DEFAULTS: RedisOptions = {
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  commandTimeout: 5_000,
};

const isClient = (connection: RedisConnection): connection is Redis | Cluster =>
  connection instanceof Redis || connection instanceof Cluster;

/** The connection a producer (`bullmqQueue`, `redrive`) adds jobs on. A lent client is used as it is. */
export function producerConnection(connection: RedisConnection): ConnectionHandle {
  if (isClient(connection)) return { client: connection, owned: false };
  if (typeof connection === "string") return { client: new Redis(connection, PRODUCER_DEFAULTS), owned: true };
  return { client: new Redis({ ...PRODUCER_DEFAULTS, ...connection }), owned: true };
}

/**
 * The connection a worker runs on. A lent client is duplicated with the settings BullMQ requires, so
 * the same client (or URL) can be handed to receivers and workers alike.
 */
export function workerConnection(connection: RedisConnection): ConnectionHandle {
  if (connection instanceof Cluster) {
    const redisOptions = { ...connection.options.redisOptions, ...WORKER_REQUIRED };
    return { client: connection.duplicate(undefined, { enableOfflineQueue: true, redisOptions }), owned: true };
  }
  if (connection instanceof Redis) return { client: connection.duplicate(WORKER_REQUIRED), owned: true };
  if (typeof connection === "string") return { client: new Redis(connection, WORKER_REQUIRED), owned: true };
  return { client: new Redis({ ...connection, ...WORKER_REQUIRED }), owned: true };
}

/** Close a client made here; a lent client stays open for its owner. */
export async function closeIfOwned(handle: ConnectionHandle): Promise<void> {
  if (handle.owned) await closeClient(handle.client);
}

/** QUIT lets replies in flight arrive; a client that is not connected would only queue it, so drop it. */
export async function closeClient(client: Redis | Cluster): Promise<void> {
  if (client.status === "ready") await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

/** Rejects with `error()` if `task` has not settled within `ms`; the task itself keeps running. */
export async function within<T>(task: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), Math.max(0, ms));
  });
  try {
    return await Promise.race([task, limit]);
  } finally {
    clearTimeout(timer);
  }
}
