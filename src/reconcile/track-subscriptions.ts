import type { Handler } from "../dispatch/handlers.js";
import { sortablePosition } from "../idempotency/position.js";
import type { ReconcileJournal } from "./journal.js";

/**
 * A receiver's `onAny` hook that keeps, per subscription, its last processed notification (id, type,
 * phase, `next_execution_time`) in the journal, where the reconciler finds renewals that never came.
 * `onAny` runs after the typed handler succeeded and never for a duplicate, so only processed
 * notifications count. A journal that cannot be written is logged, not thrown: failing the
 * notification would run its handler again, and the worst a lost record does is a false alarm later.
 */
export function trackSubscriptions(
  journal: ReconcileJournal,
  options: { now?: () => number; then?: Handler } = {},
): Handler & ((...args: Parameters<Handler>) => Promise<void>) {
  const now = options.now ?? Date.now;
  return async (notification, ctx) => {
    await options.then?.(notification, ctx);
    const resource = notification.resource;
    const position = resource?.update_time === undefined ? undefined : sortablePosition(resource.update_time);
    if (!resource?.id || position === undefined) return;
    try {
      await journal.seen({
        subscription_id: resource.id,
        notification_id: notification.id,
        event_type: notification.event_type,
        position,
        execution_phase: resource.execution_phase,
        next_execution_time: epochMs(resource.next_execution_time),
        seen_at: now(),
      });
      // The order a renewal charged is one the platform settles: named here, it is not a settlement gap.
      const charged = resource.renewal_event?.payment_detail?.order_id;
      if (charged) await journal.mention([charged], now());
    } catch (err) {
      ctx.log.warn({ err }, "reconcile: the subscription's last notification could not be recorded");
    }
  };
}

/** `next_execution_time` is an int64: a number, or a string of one (int64 beyond 2^53 is sent as text). */
function epochMs(value: string | number | undefined): number | undefined {
  const ms = typeof value === "string" ? Number(value) : value;
  return ms !== undefined && Number.isFinite(ms) ? ms : undefined;
}
