import { Cluster, type ClusterNode, Redis, type RedisOptions } from "ioredis";

/**
 * How every Redis-backed part (`redisStore`, `redisStreamRecorder`, `bullmqQueue`, `createWorker`,
 * `redrive`) takes its Redis, as its `connection` option:
 * - an ioredis client or cluster: used as it is and left open for its owner;
 * - a URL (`redis://host:6379/0`), ioredis options (`{ host, port }`), or Redis Cluster startup nodes
 *   (`[{ host, port }, ...]`): connected with the part's own settings and closed by its `close()`.
 */
export type RedisConnection = Redis | Cluster | string | RedisOptions | readonly ClusterNode[];

/** The option every Redis-backed part takes. */
export interface ConnectionOption {
  connection: RedisConnection;
}

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

export const isRedisClient = (connection: RedisConnection): connection is Redis | Cluster =>
  connection instanceof Redis || connection instanceof Cluster;

/** Whether the connection is, or will be, a Redis Cluster. */
export const isClusterConnection = (connection: RedisConnection): boolean =>
  connection instanceof Cluster || Array.isArray(connection);

/**
 * A client for `connection`: a lent client as it is; otherwise one made here with `defaults` under the
 * caller's options and `required` over them (a cluster gets them as the options of each node).
 */
export function connect(
  connection: RedisConnection,
  settings: { defaults?: RedisOptions; required?: RedisOptions },
): ConnectionHandle {
  if (isRedisClient(connection)) return { client: connection, owned: false };
  const { defaults = {}, required = {} } = settings;
  if (typeof connection === "string")
    return { client: new Redis(connection, { ...defaults, ...required }), owned: true };
  if (Array.isArray(connection)) {
    const redisOptions = { ...defaults, ...required };
    const cluster = new Cluster([...(connection as readonly ClusterNode[])], {
      redisOptions,
      enableOfflineQueue: redisOptions.enableOfflineQueue ?? true,
      enableAutoPipelining: redisOptions.enableAutoPipelining ?? false,
    });
    return { client: cluster, owned: true };
  }
  return { client: new Redis({ ...defaults, ...(connection as RedisOptions), ...required }), owned: true };
}

/** The connection a producer (`bullmqQueue`, `redrive`) adds jobs on. A lent client is used as it is. */
export function producerConnection(connection: RedisConnection): ConnectionHandle {
  return connect(connection, { defaults: PRODUCER_DEFAULTS });
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
  return connect(connection, { required: WORKER_REQUIRED });
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
