import { isClusterConnection, type RedisConnection } from "../redis/connect.js";
import { coded } from "../shared/errors.js";

/** BullMQ's key prefix when none is given. */
const BULLMQ_DEFAULT_PREFIX = "bull";

/**
 * The hash tag Redis Cluster hashes a key by: the text between the first `{` and the next `}`, when
 * not empty. Keys with the same tag are in the same slot.
 */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf("{");
  if (open < 0) return undefined;
  const close = key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/**
 * BullMQ's scripts touch several keys of a queue at once, which Redis Cluster allows only within one
 * hash slot: without a hash tag every job fails with CROSSSLOT at run time. Catch it at start-up
 * instead, with the fix in the message. Every queue key starts with `${prefix}:${name}:`.
 */
export function assertClusterPrefix(
  caller: string,
  connection: RedisConnection,
  name: string,
  prefix: string | undefined,
): void {
  if (!isClusterConnection(connection)) return;
  if (hashTagOf(`${prefix ?? BULLMQ_DEFAULT_PREFIX}:${name}:`) !== undefined) return;
  const given = prefix === undefined ? 'no prefix (BullMQ\'s default is "bull")' : `prefix ${JSON.stringify(prefix)}`;
  throw coded(
    new Error(
      `${caller}: on Redis Cluster every key of a queue must be in one hash slot, and ${given} has no hash tag. ` +
        `Give a prefix with one, such as prefix: "{mw}", and the same prefix to bullmqQueue, createWorker and redrive.`,
    ),
    "MW_CLUSTER_HASH_TAG",
  );
}
