import { memoryStore } from "merchant-webhooks";
import { createPaymentClient, memoryOrderLedger } from "merchant-webhooks/client";
import { createReconciler, memoryJournal } from "merchant-webhooks/reconcile";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { buildProduct, buildSubscriber } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it } from "vitest";
import { startWebhook } from "../cli/run-cli.js";
import { silentLogger } from "../support/capture-logger.js";
import { effectCounter, laterBaseUrl, orderEventOf, orderEventWebhook, simpleOrder } from "./support.js";

describe("the fund-split list as a source: orders the platform settled that nothing named", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0)) await close();
  });

  it("reports only the settled orders no processed event, renewal or repair named, once each, across pages", async () => {
    const store = memoryStore();
    const journal = memoryJournal();
    const ledger = memoryOrderLedger();
    const effects = effectCounter();
    const later = laterBaseUrl();
    const client = createPaymentClient({
      baseUrl: later.baseUrl,
      ledger,
      fetch: later.fetch,
    });
    const reconciler = createReconciler({
      client,
      ledger,
      store,
      journal,
      handlers: { onOrder: effects.handler },
      settleMs: 0,
      settlements: {
        orderId: (record) => (typeof record.order_id === "string" ? record.order_id : undefined),
        key: (record) => String(record.detail_id),
        pageSize: 2,
      },
      logger: silentLogger(),
    });
    const orderHook = await orderEventWebhook(store, reconciler.orderHandler(effects.handler));
    const subscriptionHook = await startWebhook({
      idempotency: store,
      onRenew: async () => {},
      onAny: reconciler.onAny,
    });
    cleanup.push(orderHook.close, subscriptionHook.close);
    const sim = createPlatformSimulator({ webhookUrl: subscriptionHook.url, timeScale: 0.001, retrySchedule: [0] });
    cleanup.push(() => sim.close());
    later.to(await sim.listen(0));

    // Named live: its order event was processed. Named by a repair: its event never came.
    const live = sim.orders.pay((await client.createOrder(simpleOrder("settle-live"))).id);
    const post = await fetch(orderHook.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(orderEventOf(live, "EVT-SETTLE-LIVE")),
    });
    expect(post.status).toBe(200);
    const repaired = sim.orders.pay((await client.createOrder(simpleOrder("settle-repaired"))).id);
    // Named by a processed renewal: the order it charged.
    const subscription = await sim.subscriptions.create({
      merchant_id: "M-SETTLE",
      subscriber: buildSubscriber(),
      product: buildProduct(),
    });
    const renewal = await subscription.renew();
    await sim.settled();
    const renewalOrder = renewal.resource.renewal_event!.payment_detail!.order_id!;
    // Settled, and never named: an order made elsewhere, and one named by no event, split twice.
    const split = (order_id: string | undefined, detail_id: string) => ({ detail_id, order_id, amount_value: "1.00" });
    sim.lists.insert(
      "fund_split",
      split(live.id, "D-1"),
      split(repaired.id, "D-2"),
      split(renewalOrder, "D-3"),
      split("ORD-ELSEWHERE", "D-4"),
      split("ORD-ELSEWHERE", "D-5"),
      split(undefined, "D-6"),
    );

    const unmatched = (report: Awaited<ReturnType<typeof reconciler.run>>) =>
      report.gaps.flatMap((gap) => (gap.kind === "settlement_unmatched" ? [[gap.order_id, gap.record_key]] : []));
    // Audit: the repaired order's event is still missing, so it is unmatched too; nothing is written.
    const audit = await reconciler.run();
    expect(audit.checked.settlements).toBe(6);
    expect(unmatched(audit)).toHaveLength(2);
    expect(unmatched(audit)).toEqual(
      expect.arrayContaining([
        ["ORD-ELSEWHERE", "D-4"],
        [repaired.id, "D-2"],
      ]),
    );
    const repair = await reconciler.run({ mode: "repair" });
    expect(repair.repaired).toBe(1);
    expect(unmatched(repair)).toEqual([["ORD-ELSEWHERE", "D-4"]]);
    expect(repair.errors).toEqual([]);
  });

  it("is refused without a client that lists, or without orderId", () => {
    expect(() =>
      createReconciler({
        client: { queryOrder: async () => ({ id: "x" }) },
        store: memoryStore(),
        settlements: { orderId: () => undefined },
      }),
    ).toThrow(/settlements needs an orderId function and a client with fundSplitDetails/);
  });
});
