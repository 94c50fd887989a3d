import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { PaymentClient } from "../client/create-payment-client.js";
import { PaymentApiError } from "../client/errors.js";
import { ledgerKey, type OrderLedger, type OrderLedgerEntry } from "../client/order-ledger.js";
import type { ListRecord } from "../client/paginate.js";
import { ORDER_EVENT_TYPE } from "../client/schemas/events.js";
import type { QueriedOrder } from "../client/types.js";
import type { Handler, HandlerContext } from "../dispatch/handlers.js";
import { ownerTokens, runHandler } from "../dispatch/run-claimed.js";
import { DEFAULT_LEASE_MS, type IdempotencyStore } from "../idempotency/store.js";
import { defaultLogger, handlerLogger } from "../logging/logger.js";
import type { SubscriptionNotification } from "../schema/index.js";
import { canonicalJson } from "../shared/canonical-json.js";
import { coded, optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { ATTR } from "../telemetry/attributes.js";
import { loadOtelApi, otelApiLoading } from "../telemetry/load-api.js";
import { currentTelemetry } from "../telemetry/telemetry.js";
import { memoryJournal, type ReconcileJournal, type RunCheckpoint, type SubscriptionSeen } from "./journal.js";
import {
  applyOrderStatusOnce,
  oncePerOrderStatus,
  orderStatusRecord,
  type ReconcilableOrderEvent,
} from "./order-status-once.js";
import type { ReconcileGap, ReconcileReport } from "./report.js";
import { trackSubscriptions } from "./track-subscriptions.js";

export type ReconcileMode = "audit" | "repair";
export type OverdueRenewal = Extract<ReconcileGap, { kind: "renewal_overdue" }>;

export interface ReconcilerOptions {
  /** The platform client QueryOrder (and, with `settlements`, the fund-split list) is asked through (`createPaymentClient`). */
  client: Pick<PaymentClient, "queryOrder"> & Partial<Pick<PaymentClient, "fundSplitDetails">>;
  /** The orders the client created (the same ledger given to `createPaymentClient`). Without it, orders are not checked. */
  ledger?: OrderLedger;
  /** The idempotency store the receivers use: live events and reconciliation claim the same key in it. */
  store: IdempotencyStore;
  /** The lock, checkpoint, reports and subscription records. Default `memoryJournal()` (one process). */
  journal?: ReconcileJournal;
  handlers?: {
    /** The order-event handler: the same one the live receiver runs, through `reconciler.orderHandler`. */
    onOrder?: Handler<ReconcilableOrderEvent>;
    /** Told of each overdue renewal, in both modes (it repairs nothing: the platform has no subscription query). */
    onOverdue?: (gap: OverdueRenewal) => void | Promise<void>;
  };
  /**
   * The fund-split detail list as a source: the orders the platform settled in the window's months
   * that no processed notification or order event named are reported (`settlement_unmatched`). The
   * list's record fields are not published, so `orderId` maps a record to its order id (undefined:
   * not an order's record, skipped); `key` is the record's natural key, for the client's deduplication
   * across pages (default: its whole content). Detection only.
   */
  settlements?: {
    orderId: (record: ListRecord) => string | undefined;
    key?: (record: ListRecord) => string;
    pageSize?: number;
  };
  /** `audit` (default): report only, no handler runs, nothing written but the report. `repair`: run the order handler for each gap. */
  mode?: ReconcileMode;
  /** An order is checked once it is this old (its events have had time to arrive). Default 10 min. */
  settleMs?: number;
  /** Orders created this far back are checked. Default 48 h: scheduled daily, each order is checked twice. */
  lookBackMs?: number;
  /** A renewal is overdue this long after its `next_execution_time`. Default 1 h. */
  graceMs?: number;
  /** Statuses after which an order is not checked again once its effect is done. */
  finalStatuses?: readonly string[];
  /** Statuses an order has before anything happened to it: no event announces them. */
  initialStatuses?: readonly string[];
  /** The run lock's time to live, renewed while the run goes on; a run that died frees it after this long. Default 30 s. */
  lockTtlMs?: number;
  /** Time limit of one reconciled handler run. Default 10 s. */
  timeoutMs?: number;
  /** Reports kept in the journal. Default 100. */
  keepReports?: number;
  logger?: Logger;
  /** The clock (epoch ms); for tests and for a run "as of" another time. */
  now?: () => number;
  /** Called after each order and subscription checked (for a progress line). */
  onProgress?: (progress: { phase: "orders" | "settlements" | "subscriptions"; checked: number; gaps: number }) => void;
}

export interface Reconciler {
  /** One run: single-flight across processes, resumed from a checkpoint a dead run left. */
  run(options?: { mode?: ReconcileMode; lookBackMs?: number }): Promise<ReconcileReport>;
  /** The kept reports, newest first. */
  reports(limit?: number): Promise<ReconcileReport[]>;
  /** Wrap the live order-event handler so it claims the order's status, the key reconciliation claims. */
  orderHandler(handler: Handler<ReconcilableOrderEvent>): Handler<ReconcilableOrderEvent>;
  /** The receiver's `onAny`: records each subscription's last processed notification (compose with your own). */
  onAny(notification: SubscriptionNotification, ctx: HandlerContext): Promise<void>;
}

const MINUTE = 60_000;
export const DEFAULT_FINAL_STATUSES: readonly string[] = ["COMPLETED", "VOIDED", "REFUNDED", "CAPTURE_FAILED"];
export const DEFAULT_INITIAL_STATUSES: readonly string[] = ["CREATED", "SAVED", "PAYER_ACTION_REQUIRED"];

const OPTION_KEYS = {
  client: true,
  ledger: true,
  store: true,
  journal: true,
  settlements: true,
  handlers: true,
  mode: true,
  settleMs: true,
  lookBackMs: true,
  graceMs: true,
  finalStatuses: true,
  initialStatuses: true,
  lockTtlMs: true,
  timeoutMs: true,
  keepReports: true,
  logger: true,
  now: true,
  onProgress: true,
} as const satisfies KnownKeys<ReconcilerOptions>;

function checkedMs(name: string, value: number | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min)
    throw optionError(
      new RangeError(`createReconciler: ${name} must be a number of milliseconds >= ${min}, got ${String(value)}`),
      "MW_INVALID_OPTION",
      name,
    );
  return value;
}

function checkedMode(mode: unknown): ReconcileMode {
  if (mode === undefined || mode === "audit" || mode === "repair") return mode ?? "audit";
  throw optionError(
    new TypeError(`createReconciler: mode must be "audit" or "repair", got ${String(mode)}`),
    "MW_INVALID_OPTION",
    "mode",
  );
}

/**
 * Finds what the platform never delivered and, in repair mode, runs the order handler for it under the
 * same once-per-key claim as live delivery. See docs/reconcile.md.
 */
export function createReconciler(options: ReconcilerOptions): Reconciler {
  rejectUnknownKeys("createReconciler", options, Object.keys(OPTION_KEYS));
  for (const name of ["client", "store"] as const)
    if (!options[name])
      throw optionError(new TypeError(`createReconciler: ${name} is required`), "MW_INVALID_OPTION", name);
  if (options.settlements && (typeof options.settlements.orderId !== "function" || !options.client.fundSplitDetails))
    throw optionError(
      new TypeError("createReconciler: settlements needs an orderId function and a client with fundSplitDetails"),
      "MW_INVALID_OPTION",
      "settlements",
    );
  const defaultMode = checkedMode(options.mode);
  const settleMs = checkedMs("settleMs", options.settleMs, 10 * MINUTE);
  const defaultLookBack = checkedMs("lookBackMs", options.lookBackMs, 48 * 60 * MINUTE);
  const graceMs = checkedMs("graceMs", options.graceMs, 60 * MINUTE);
  const lockTtlMs = checkedMs("lockTtlMs", options.lockTtlMs, 30_000, 1);
  const timeoutMs = checkedMs("timeoutMs", options.timeoutMs, 10_000);
  const keepReports = checkedMs("keepReports", options.keepReports, 100, 1);
  const finalStatuses = new Set(options.finalStatuses ?? DEFAULT_FINAL_STATUSES);
  const initialStatuses = new Set(options.initialStatuses ?? DEFAULT_INITIAL_STATUSES);
  const { store, ledger, client } = options;
  const journal = options.journal ?? memoryJournal();
  const now = options.now ?? Date.now;
  const logger = options.logger ?? defaultLogger();
  const ctxLogger = handlerLogger(logger, {});
  const nextOwner = ownerTokens();
  const leaseMs = store.leaseMs ?? DEFAULT_LEASE_MS;
  const onAny = trackSubscriptions(journal, { now });
  loadOtelApi();

  async function run(runOptions: { mode?: ReconcileMode; lookBackMs?: number } = {}): Promise<ReconcileReport> {
    const mode = checkedMode(runOptions.mode ?? defaultMode);
    const owner = nextOwner("reconcile");
    const at = now();
    const lookBack = checkedMs("lookBackMs", runOptions.lookBackMs, defaultLookBack);
    const fresh: ReconcileReport = {
      run_id: owner,
      mode,
      status: "completed",
      started_at: new Date(at).toISOString(),
      window: { from: new Date(at - lookBack).toISOString(), to: new Date(at - settleMs).toISOString() },
      checked: { orders: 0, subscriptions: 0 },
      gaps: [],
      repaired: 0,
      errors: [],
    };
    if (!(await journal.acquire(owner, lockTtlMs))) return { ...fresh, status: "busy", finished_at: fresh.started_at };

    let lockLost = false;
    const heartbeat = setInterval(
      () =>
        void journal.renew(owner, lockTtlMs).then(
          (held) => {
            if (!held) lockLost = true;
          },
          () => {},
        ),
      Math.max(1, Math.floor(lockTtlMs / 3)),
    );
    heartbeat.unref?.();
    const stillHeld = () => {
      if (lockLost) throw coded(new Error("reconcile: the run lock was lost to another run"), "MW_RECONCILE_LOCK_LOST");
    };
    try {
      // A run that died left its checkpoint: this run goes on from there, in its window and mode.
      const previous = await journal.checkpoint();
      const resumed = previous && previous.report.mode === mode ? previous : undefined;
      const report: ReconcileReport = resumed
        ? { ...resumed.report, run_id: owner, resumed_from: resumed.report.run_id }
        : fresh;
      const checkpoint: RunCheckpoint = resumed
        ? { ...resumed, run_id: owner, report }
        : { run_id: owner, phase: "orders", report };

      if (checkpoint.phase === "orders" && ledger) {
        const from = Date.parse(report.window.from);
        const to = Date.parse(report.window.to);
        for (;;) {
          const entries = await ledger.open({ from, to, after: checkpoint.after, limit: 100 });
          if (entries.length === 0) break;
          for (const entry of entries) {
            stillHeld();
            await checkOrder(entry, report, mode, owner);
            report.checked.orders++;
            checkpoint.after = { created_at: entry.created_at, key: ledgerKey(entry) };
            await journal.saveCheckpoint(checkpoint);
            options.onProgress?.({ phase: "orders", checked: report.checked.orders, gaps: report.gaps.length });
          }
        }
      }
      if (options.settlements && checkpoint.phase !== "subscriptions") {
        checkpoint.phase = "settlements";
        checkpoint.after = undefined;
        await journal.saveCheckpoint(checkpoint);
        await checkSettlements(options.settlements, report, mode, stillHeld);
      }
      checkpoint.phase = "subscriptions";
      checkpoint.after = undefined;
      await journal.saveCheckpoint(checkpoint);
      // Detection only, and read-only: a resumed run checks every subscription again.
      report.checked.subscriptions = 0;
      report.gaps = report.gaps.filter((gap) => gap.kind !== "renewal_overdue");
      let cursor: string | undefined;
      do {
        const page = await journal.subscriptions(cursor);
        for (const seen of page.items) {
          stillHeld();
          await checkSubscription(seen, report);
          report.checked.subscriptions++;
          options.onProgress?.({
            phase: "subscriptions",
            checked: report.checked.subscriptions,
            gaps: report.gaps.length,
          });
        }
        cursor = page.cursor;
      } while (cursor !== undefined);

      stillHeld();
      report.finished_at = new Date(now()).toISOString();
      await journal.saveReport(report, keepReports);
      await journal.clearCheckpoint();
      await countGaps(report);
      return report;
    } finally {
      clearInterval(heartbeat);
      await journal.release(owner).catch(() => {});
    }
  }

  /** Each gap of a finished run on the `webhook.reconcile.gaps` counter, while an OpenTelemetry SDK is registered. */
  async function countGaps(report: ReconcileReport) {
    await otelApiLoading();
    const counter = currentTelemetry()?.metrics?.reconcileGaps;
    for (const gap of report.gaps)
      counter?.add(1, {
        [ATTR.gapKind]: gap.kind,
        [ATTR.mode]: report.mode,
        [ATTR.repaired]: gap.kind === "order_status" && gap.repaired,
      });
  }

  async function checkOrder(entry: OrderLedgerEntry, report: ReconcileReport, mode: ReconcileMode, owner: string) {
    const error = (err: unknown, message?: string) =>
      report.errors.push({
        kind: "order",
        id: entry.reference_id,
        message: message ?? (err as Error)?.message ?? String(err),
        code: (err as { code?: string })?.code,
      });
    let order: QueriedOrder;
    try {
      const lookup = entry.id !== undefined ? { id: entry.id } : { reference_id: entry.reference_id };
      order = await client.queryOrder(
        lookup,
        entry.merchant_id !== undefined ? { merchant_id: entry.merchant_id } : {},
      );
    } catch (err) {
      // Asked for, but its answer never came and the platform does not know it: it was never created.
      if (err instanceof PaymentApiError && err.status === 404 && entry.id === undefined) {
        error(err, "the platform has no such order: it was never created");
        if (mode === "repair") await ledger?.close(entry);
        return;
      }
      error(err);
      return;
    }
    const status = order.status ?? "UNKNOWN";
    const final = finalStatuses.has(status);
    const unchanged = status === entry.status || (entry.status === undefined && initialStatuses.has(status));
    if (unchanged) return;
    const record = await store.get(orderStatusRecord(order));
    if (record?.state === "completed") {
      if (mode === "repair" && final) await ledger?.close(entry);
      return;
    }
    const gap: Extract<ReconcileGap, { kind: "order_status" }> = {
      kind: "order_status",
      order_id: order.id,
      reference_id: entry.reference_id,
      status,
      repaired: false,
    };
    report.gaps.push(gap);
    const onOrder = options.handlers?.onOrder;
    if (mode !== "repair" || !onOrder) return;
    const event: ReconcilableOrderEvent = {
      id: `RECONCILED-${order.id}-${status}`,
      create_time: new Date(now()).toISOString(),
      event_type: ORDER_EVENT_TYPE,
      resource_type: "order",
      order,
      reconciled: true,
    };
    try {
      const outcome = await applyOrderStatusOnce(store, order, owner, () => runReconciled(onOrder, event), leaseMs);
      if (outcome.status === "processing") {
        report.errors.push({
          kind: "order",
          id: entry.reference_id,
          message: "being applied by a live delivery; the next run checks it again",
        });
        return;
      }
      if (outcome.status === "ran") {
        gap.repaired = true;
        report.repaired++;
      }
      await journal.mention([order.id], now());
      if (final) await ledger?.close(entry);
      else await ledger?.record({ ...entry, id: order.id, status });
    } catch (err) {
      error(err);
    }
  }

  function runReconciled(handler: Handler<ReconcilableOrderEvent>, event: ReconcilableOrderEvent): Promise<void> {
    const receivedAt = new Date(now());
    const contextFor = (signal: () => AbortSignal) =>
      ({
        id: event.id,
        eventType: event.event_type,
        event: undefined,
        attempt: 1,
        get signal() {
          return signal();
        },
        log: ctxLogger.child({ notification_id: event.id, order_id: event.order.id, reconciled: true }),
        headers: {},
        receivedAt,
        transaction: undefined,
        platform: client,
      }) as unknown as HandlerContext;
    // The claim's own heartbeat keeps its lease; the time limit is the handler's.
    return runHandler(handler as unknown as Handler, event as unknown as SubscriptionNotification, contextFor, {
      timeoutMs,
      leaseMs: Number.POSITIVE_INFINITY,
      extendLease: async () => true,
    });
  }

  /**
   * The fund-split records of the window's months, a batch at a time, against the orders named so far.
   * Read-only but for forgetting mentions older than the months listed (repair mode); a resumed run
   * lists them again.
   */
  async function checkSettlements(
    source: NonNullable<ReconcilerOptions["settlements"]>,
    report: ReconcileReport,
    mode: ReconcileMode,
    stillHeld: () => void,
  ) {
    report.gaps = report.gaps.filter((gap) => gap.kind !== "settlement_unmatched");
    report.checked.settlements = 0;
    const month = (iso: string) => iso.slice(0, 7);
    const keyOf =
      source.key ?? ((record: ListRecord) => createHash("sha256").update(canonicalJson(record)).digest("base64url"));
    const reported = new Set<string>();
    let batch: { orderId: string; key: string }[] = [];
    const settle = async () => {
      const named = await journal.mentioned(batch.map((item) => item.orderId));
      for (const { orderId, key } of batch) {
        if (named.has(orderId) || reported.has(orderId)) continue;
        reported.add(orderId);
        report.gaps.push({ kind: "settlement_unmatched", order_id: orderId, record_key: key });
      }
      batch = [];
      options.onProgress?.({
        phase: "settlements",
        checked: report.checked.settlements ?? 0,
        gaps: report.gaps.length,
      });
    };
    try {
      const records = client.fundSplitDetails!({
        pageSize: source.pageSize ?? 100,
        filters: { transaction_begin_date: month(report.window.from), transaction_end_date: month(report.window.to) },
        ...(source.key ? { key: source.key } : {}),
      });
      for await (const record of records) {
        stillHeld();
        report.checked.settlements++;
        const orderId = source.orderId(record);
        if (orderId === undefined) continue;
        batch.push({ orderId, key: keyOf(record) });
        if (batch.length >= 100) await settle();
      }
      await settle();
    } catch (err) {
      if ((err as { code?: string })?.code === "MW_RECONCILE_LOCK_LOST") throw err;
      report.errors.push({
        kind: "settlement",
        id: "fund_split",
        message: (err as Error)?.message ?? String(err),
        code: (err as { code?: string })?.code,
      });
    }
    // A mention older than the first month listed, with a month to spare, can no longer match a record.
    if (mode === "repair")
      await journal.forgetMentions(Date.parse(`${month(report.window.from)}-01T00:00:00Z`) - 31 * 24 * 60 * MINUTE);
  }

  async function checkSubscription(seen: SubscriptionSeen, report: ReconcileReport) {
    const due = seen.next_execution_time;
    if (due === undefined || due + graceMs > now()) return;
    const gap: OverdueRenewal = {
      kind: "renewal_overdue",
      subscription_id: seen.subscription_id,
      expected_at: new Date(due).toISOString(),
      last_notification: {
        id: seen.notification_id,
        event_type: seen.event_type,
        execution_phase: seen.execution_phase,
        update_time: `${seen.position}Z`,
      },
    };
    report.gaps.push(gap);
    try {
      await options.handlers?.onOverdue?.(gap);
    } catch (err) {
      report.errors.push({
        kind: "subscription",
        id: seen.subscription_id,
        message: "onOverdue failed",
        code: (err as { code?: string })?.code,
      });
    }
  }

  return {
    run,
    reports: (limit) => journal.reports(limit),
    orderHandler(handler) {
      const once = oncePerOrderStatus(store, handler);
      return async (event, ctx) => {
        await once(event, ctx);
        // Named by a processed event, the order is no settlement gap. Logged, not thrown, as onAny's record.
        await journal
          .mention([event.order.id], now())
          .catch((err) => ctx.log.warn({ err }, "reconcile: the order could not be recorded as named"));
      };
    },
    onAny,
  };
}
