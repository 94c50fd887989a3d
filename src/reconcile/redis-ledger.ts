import type { Cluster, Redis } from "ioredis";
import { ledgerAfter, ledgerKey, type OrderLedger, type OrderLedgerEntry } from "../client/order-ledger.js";
import { DEFAULT_RECONCILE_PREFIX } from "./redis-journal.js";

/**
 * An order ledger in Redis: each entry in one hash (`${prefix}ledger:entries`), the open ones in a
 * sorted set by creation time (`${prefix}ledger:open`), so a run reads a window oldest first.
 */
export function redisOrderLedger(redis: Redis | Cluster, options: { prefix?: string } = {}): OrderLedger {
  const prefix = options.prefix ?? DEFAULT_RECONCILE_PREFIX;
  // One hash tag: the two keys are written together, so on a cluster they share a slot.
  const entries = `${prefix}{ledger}:entries`;
  const open = `${prefix}{ledger}:open`;
  return {
    async record(entry) {
      const key = ledgerKey(entry);
      await redis.multi().hset(entries, key, JSON.stringify(entry)).zadd(open, entry.created_at, key).exec();
    },
    async open({ from, to, after, limit }) {
      const found: OrderLedgerEntry[] = [];
      const min = Math.max(from, after?.created_at ?? from);
      // Entries with the same creation time as `after` come back too, and are skipped here.
      for (let offset = 0; found.length < limit; ) {
        const page = await redis.zrangebyscore(open, min, to, "LIMIT", offset, limit);
        if (page.length === 0) break;
        offset += page.length;
        const texts = await redis.hmget(entries, ...page);
        for (const text of texts) {
          if (text === null) continue;
          const entry = JSON.parse(text) as OrderLedgerEntry;
          if (ledgerAfter(entry, after) && found.length < limit) found.push(entry);
        }
      }
      return found;
    },
    async close(entry) {
      const key = ledgerKey(entry);
      await redis.multi().zrem(open, key).hdel(entries, key).exec();
    },
  };
}
