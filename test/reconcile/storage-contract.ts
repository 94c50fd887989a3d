import { memoryStore } from "merchant-webhooks";
import { createPaymentClient, type OrderLedger, type OrderLedgerEntry } from "merchant-webhooks/client";
import { createReconciler, type ReconcileJournal, type ReconcileReport } from "merchant-webhooks/reconcile";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually } from "../support/redis.js";
import { effectCounter, simpleOrder } from "./support.js";

/** A fresh, empty ledger and journal of one backend, each call its own. */
export type ReconcileStorage = () => Promise<{ ledger: OrderLedger; journal: ReconcileJournal }>;

const entry = (reference_id: string, created_at: number, extra: Partial<OrderLedgerEntry> = {}): OrderLedgerEntry => ({
  reference_id,
  created_at,
  ...extra,
});

const report = (run_id: string): ReconcileReport => ({
  run_id,
  mode: "audit",
  status: "completed",
  started_at: "2026-01-01T00:00:00.000Z",
  window: { from: "2026-01-01T00:00:00.000Z", to: "2026-01-02T00:00:00.000Z" },
  checked: { orders: 1, subscriptions: 0 },
  gaps: [],
  repaired: 0,
  errors: [],
});

/** The order ledger's and the journal's contract, the same for every backend. */
export function describeReconcileStorage(name: string, storage: ReconcileStorage): void {
  describe(`${name}: the order ledger and the reconcile journal keep their contract`, () => {
    it("ledger: a window oldest first, ties by merchant and reference, paged without a miss or a repeat", async () => {
      const { ledger } = await storage();
      await ledger.record(entry("r-late", 3_000));
      await ledger.record(entry("r-b", 2_000, { merchant_id: "M-2" }));
      await ledger.record(entry("r-b", 2_000, { merchant_id: "M-1" }));
      await ledger.record(entry("r-a", 2_000, { merchant_id: "M-1" }));
      await ledger.record(entry("r-c", 2_000));
      await ledger.record(entry("r-early", 1_000));
      await ledger.record(entry("r-outside", 9_000));
      const window = { from: 1_000, to: 3_000 };
      const all = await ledger.open({ ...window, limit: 100 });
      expect(all.map((e) => `${e.merchant_id ?? ""}/${e.reference_id}`)).toEqual([
        "/r-early",
        "/r-c",
        "M-1/r-a",
        "M-1/r-b",
        "M-2/r-b",
        "/r-late",
      ]);
      const paged: OrderLedgerEntry[] = [];
      let after: { created_at: number; key: string } | undefined;
      for (;;) {
        const page = await ledger.open({ ...window, after, limit: 2 });
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(2);
        paged.push(...page);
        const last = page.at(-1)!;
        after = { created_at: last.created_at, key: `${last.merchant_id ?? ""}\u0000${last.reference_id}` };
      }
      expect(paged).toEqual(all);
    });

    it("ledger: record replaces the entry of its merchant and reference; close forgets it", async () => {
      const { ledger } = await storage();
      await ledger.record(entry("r-1", 1_000, { merchant_id: "M" }));
      await ledger.record(entry("r-1", 1_000, { merchant_id: "M", id: "ORD-1", status: "APPROVED" }));
      await ledger.record(entry("r-2", 1_500));
      expect(await ledger.open({ from: 0, to: 2_000, limit: 10 })).toEqual([
        { reference_id: "r-1", created_at: 1_000, merchant_id: "M", id: "ORD-1", status: "APPROVED" },
        { reference_id: "r-2", created_at: 1_500 },
      ]);
      await ledger.close({ reference_id: "r-1", merchant_id: "M" });
      // Another merchant's reference of the same name is another order.
      await ledger.close({ reference_id: "r-2", merchant_id: "M" });
      expect((await ledger.open({ from: 0, to: 2_000, limit: 10 })).map((e) => e.reference_id)).toEqual(["r-2"]);
    });

    it("journal: the run lock is one owner's until released or lapsed; renew and release are the owner's", async () => {
      const { journal } = await storage();
      expect(await journal.acquire("a", 60_000)).toBe(true);
      expect(await journal.acquire("b", 60_000)).toBe(false);
      expect(await journal.renew("b", 60_000)).toBe(false);
      expect(await journal.renew("a", 60_000)).toBe(true);
      await journal.release("b");
      expect(await journal.acquire("b", 60_000)).toBe(false);
      await journal.release("a");
      expect(await journal.acquire("b", 50)).toBe(true);
      // b's lease lapses: c takes the lock, and b can no longer renew it.
      await eventually(() => journal.acquire("c", 60_000), 5_000, "b's lease to lapse");
      expect(await journal.renew("b", 60_000)).toBe(false);
    });

    it("journal: a checkpoint is kept until cleared; reports newest first, the newest `keep` only", async () => {
      const { journal } = await storage();
      expect(await journal.checkpoint()).toBeUndefined();
      const checkpoint = {
        run_id: "r1",
        phase: "orders" as const,
        after: { created_at: 5, key: "\u0000ref" },
        report: report("r1"),
      };
      await journal.saveCheckpoint(checkpoint);
      await journal.saveCheckpoint({ ...checkpoint, after: { created_at: 6, key: "\u0000ref2" } });
      expect(await journal.checkpoint()).toEqual({ ...checkpoint, after: { created_at: 6, key: "\u0000ref2" } });
      await journal.clearCheckpoint();
      expect(await journal.checkpoint()).toBeUndefined();
      for (const run of ["r1", "r2", "r3", "r4"]) await journal.saveReport(report(run), 3);
      expect((await journal.reports()).map((r) => r.run_id)).toEqual(["r4", "r3", "r2"]);
      expect((await journal.reports(1)).map((r) => r.run_id)).toEqual(["r4"]);
      expect(await journal.reports(1)).toEqual([report("r4")]);
    });

    it("journal: a subscription's record is replaced only by a newer notification; every one paged once", async () => {
      const { journal } = await storage();
      const seen = (id: string, position: string, notification = `N-${id}-${position}`) => ({
        subscription_id: id,
        notification_id: notification,
        event_type: "SUBSCRIPTION_RENEW",
        position,
        next_execution_time: 1_000,
        seen_at: 1,
      });
      for (let index = 0; index < 7; index++) await journal.seen(seen(`S-${index}`, "2026-01-02T00:00:00"));
      await journal.seen(seen("S-0", "2026-01-03T00:00:00"));
      await journal.seen(seen("S-0", "2026-01-01T00:00:00"));
      const all = [];
      let cursor: string | undefined;
      do {
        const page = await journal.subscriptions(cursor, 3);
        all.push(...page.items);
        cursor = page.cursor;
      } while (cursor !== undefined);
      const byId = new Map(all.map((item) => [item.subscription_id, item]));
      expect(byId.size).toBe(7);
      expect(byId.get("S-0")).toEqual(seen("S-0", "2026-01-03T00:00:00"));
    });

    it("journal: the orders mentioned are found by id until forgotten by age", async () => {
      const { journal } = await storage();
      expect(await journal.mentioned(["ORD-1"])).toEqual(new Set());
      await journal.mention(["ORD-1", "ORD-2"], 1_000);
      await journal.mention(["ORD-3"], 3_000);
      await journal.mention(["ORD-1"], 2_000);
      expect(await journal.mentioned(["ORD-1", "ORD-3", "ORD-4"])).toEqual(new Set(["ORD-1", "ORD-3"]));
      await journal.forgetMentions(2_000);
      expect(await journal.mentioned(["ORD-1", "ORD-2", "ORD-3"])).toEqual(new Set(["ORD-1", "ORD-3"]));
    });

    it("a reconciler over them repairs each gap once and keeps its report", async () => {
      const { ledger, journal } = await storage();
      const sim = createPlatformSimulator({ seed: 21 });
      try {
        const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });
        for (let index = 0; index < 3; index++)
          sim.orders.pay((await client.createOrder(simpleOrder(`contract-${name}-${index}`))).id);
        const effects = effectCounter();
        const reconciler = createReconciler({
          client,
          ledger,
          journal,
          store: memoryStore(),
          handlers: { onOrder: effects.handler },
          mode: "repair",
          settleMs: 0,
          logger: silentLogger(),
        });
        const first = await reconciler.run();
        expect(first.repaired).toBe(3);
        expect((await reconciler.run()).checked.orders).toBe(0);
        expect(effects.calls()).toBe(3);
        expect((await reconciler.reports()).at(-1)).toEqual(first);
      } finally {
        await sim.close();
      }
    });
  });
}
