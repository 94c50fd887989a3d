import type { Cluster, Redis } from "ioredis";
import type { ReconcileJournal, RunCheckpoint, SubscriptionSeen } from "./journal.js";
import { SCRIPTS } from "./lua/scripts.generated.js";
import type { ReconcileReport } from "./report.js";

export const DEFAULT_RECONCILE_PREFIX = "mw:reconcile:";

// Each script (`lua/*.lua`) touches one key, so every call is atomic on its own and works on a cluster.
const { RENEW, RELEASE, SEEN } = SCRIPTS;

/**
 * The reconciler's journal in Redis: the run lock is `SET NX PX` (renewed and released only by its
 * owner), the checkpoint one string, the reports a capped list, the subscriptions one hash.
 * the orders mentioned a sorted set by time. Keys: `${prefix}lock`, `checkpoint`, `reports`,
 * `subscriptions`, `mentions`.
 */
export function redisJournal(redis: Redis | Cluster, options: { prefix?: string } = {}): ReconcileJournal {
  const prefix = options.prefix ?? DEFAULT_RECONCILE_PREFIX;
  const keys = {
    lock: `${prefix}lock`,
    checkpoint: `${prefix}checkpoint`,
    reports: `${prefix}reports`,
    subscriptions: `${prefix}subscriptions`,
    mentions: `${prefix}mentions`,
  };
  return {
    async acquire(owner, ttlMs) {
      return (await redis.set(keys.lock, owner, "PX", ttlMs, "NX")) === "OK";
    },
    async renew(owner, ttlMs) {
      return Number(await redis.eval(RENEW, 1, keys.lock, owner, ttlMs)) === 1;
    },
    async release(owner) {
      await redis.eval(RELEASE, 1, keys.lock, owner);
    },
    async checkpoint() {
      const text = await redis.get(keys.checkpoint);
      return text === null ? undefined : (JSON.parse(text) as RunCheckpoint);
    },
    async saveCheckpoint(checkpoint) {
      await redis.set(keys.checkpoint, JSON.stringify(checkpoint));
    },
    async clearCheckpoint() {
      await redis.del(keys.checkpoint);
    },
    async saveReport(report, keep) {
      await redis
        .multi()
        .lpush(keys.reports, JSON.stringify(report))
        .ltrim(keys.reports, 0, keep - 1)
        .exec();
    },
    async reports(limit = 20) {
      const texts = await redis.lrange(keys.reports, 0, limit - 1);
      return texts.map((text) => JSON.parse(text) as ReconcileReport);
    },
    async seen(record) {
      await redis.eval(SEEN, 1, keys.subscriptions, record.subscription_id, record.position, JSON.stringify(record));
    },
    async subscriptions(cursor = "0", limit = 500) {
      const [next, flat] = await redis.hscan(keys.subscriptions, cursor, "COUNT", limit);
      const items: SubscriptionSeen[] = [];
      for (let index = 1; index < flat.length; index += 2) items.push(JSON.parse(flat[index]!) as SubscriptionSeen);
      return { items, cursor: next === "0" ? undefined : next };
    },
    async mention(orderIds, at) {
      if (orderIds.length === 0) return;
      await redis.zadd(keys.mentions, "GT", ...orderIds.flatMap((id) => [at, id]));
    },
    async mentioned(orderIds) {
      if (orderIds.length === 0) return new Set();
      const scores = await redis.zmscore(keys.mentions, ...orderIds);
      return new Set(orderIds.filter((_, index) => scores[index] !== null));
    },
    async forgetMentions(before) {
      await redis.zremrangebyscore(keys.mentions, "-inf", `(${before}`);
    },
  };
}
