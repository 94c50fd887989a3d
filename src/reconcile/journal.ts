import type { ReconcileReport } from "./report.js";

/** What the reconciler keeps of a subscription: its last processed notification. */
export interface SubscriptionSeen {
  subscription_id: string;
  notification_id: string;
  event_type: string;
  /** The notification's `resource.update_time`, sortable (see `sortablePosition`): only a newer one replaces it. */
  position: string;
  execution_phase?: string | undefined;
  /** The notification's `next_execution_time` (epoch ms): when the next renewal is due. */
  next_execution_time?: number | undefined;
  /** Epoch ms when it was processed. */
  seen_at: number;
}

/** Where a run is, so a run that died is resumed by the next one instead of started over. */
export interface RunCheckpoint {
  run_id: string;
  /** The part the run is in, and the last item it finished there. */
  phase: "orders" | "settlements" | "subscriptions";
  after?: { created_at: number; key: string } | undefined;
  /** The report so far. */
  report: ReconcileReport;
}

/**
 * The reconciler's own state: the run lock (one run at a time across processes), the checkpoint,
 * the reports of past runs, and each subscription's last processed notification.
 */
export interface ReconcileJournal {
  /** Take the run lock for `owner` for `ttlMs`; false when another owner holds it. */
  acquire(owner: string, ttlMs: number): Promise<boolean>;
  /** Push the lock forward; false when `owner` no longer holds it. */
  renew(owner: string, ttlMs: number): Promise<boolean>;
  release(owner: string): Promise<void>;
  checkpoint(): Promise<RunCheckpoint | undefined>;
  saveCheckpoint(checkpoint: RunCheckpoint): Promise<void>;
  clearCheckpoint(): Promise<void>;
  /** Keep a finished run's report (the newest `keep`). */
  saveReport(report: ReconcileReport, keep: number): Promise<void>;
  /** The newest reports first. */
  reports(limit?: number): Promise<ReconcileReport[]>;
  /** Record a processed notification unless a newer one of the subscription is recorded already. */
  seen(record: SubscriptionSeen): Promise<void>;
  /** Every subscription's record, a page at a time: pass the answer's `cursor` back until it is undefined. */
  subscriptions(cursor?: string, limit?: number): Promise<{ items: SubscriptionSeen[]; cursor?: string | undefined }>;
  /** Record that a processed notification or order event (or a repair) named these orders, at `at` (epoch ms). */
  mention(orderIds: readonly string[], at: number): Promise<void>;
  /** Of `orderIds`, the ones mentioned. */
  mentioned(orderIds: readonly string[]): Promise<Set<string>>;
  /** Forget the mentions recorded before `before` (epoch ms): older than any settlement a run still lists. */
  forgetMentions(before: number): Promise<void>;
}

/** A journal in this process's memory: for tests and one process (the lock then guards only this process's runs). */
export function memoryJournal(): ReconcileJournal {
  let lock: { owner: string; until: number } | undefined;
  let checkpoint: RunCheckpoint | undefined;
  const reports: ReconcileReport[] = [];
  const seen = new Map<string, SubscriptionSeen>();
  const mentions = new Map<string, number>();
  const copy = <T>(value: T): T => structuredClone(value);
  return {
    async acquire(owner, ttlMs) {
      if (lock && lock.until > Date.now() && lock.owner !== owner) return false;
      lock = { owner, until: Date.now() + ttlMs };
      return true;
    },
    async renew(owner, ttlMs) {
      if (!lock || lock.owner !== owner || lock.until <= Date.now()) return false;
      lock.until = Date.now() + ttlMs;
      return true;
    },
    async release(owner) {
      if (lock?.owner === owner) lock = undefined;
    },
    checkpoint: async () => (checkpoint ? copy(checkpoint) : undefined),
    async saveCheckpoint(value) {
      checkpoint = copy(value);
    },
    async clearCheckpoint() {
      checkpoint = undefined;
    },
    async saveReport(report, keep) {
      reports.unshift(copy(report));
      reports.length = Math.min(reports.length, keep);
    },
    reports: async (limit = 20) => reports.slice(0, limit).map(copy),
    async seen(record) {
      const current = seen.get(record.subscription_id);
      if (current && current.position >= record.position) return;
      seen.set(record.subscription_id, { ...record });
    },
    async subscriptions(cursor, limit = 500) {
      const all = [...seen.values()];
      const start = cursor === undefined ? 0 : Number(cursor);
      const items = all.slice(start, start + limit).map(copy);
      return { items, cursor: start + limit < all.length ? String(start + limit) : undefined };
    },
    async mention(orderIds, at) {
      for (const id of orderIds) mentions.set(id, Math.max(at, mentions.get(id) ?? at));
    },
    mentioned: async (orderIds) => new Set(orderIds.filter((id) => mentions.has(id))),
    async forgetMentions(before) {
      for (const [id, at] of mentions) if (at < before) mentions.delete(id);
    },
  };
}
