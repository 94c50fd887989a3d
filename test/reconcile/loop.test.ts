import { createPaymentClient } from "merchant-webhooks/client";
import {
  createReconciler,
  type OverdueRenewal,
  orderStatusRecord,
  redisJournal,
  redisOrderLedger,
} from "merchant-webhooks/reconcile";
import { redisStore } from "merchant-webhooks/redis";
import { createPlatformSimulator, type PlatformSimulator } from "merchant-webhooks/simulator";
import { buildProduct, buildSubscriber } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { startWebhook } from "../cli/run-cli.js";
import { silentLogger } from "../support/capture-logger.js";
import { REDIS_URL } from "../support/redis.js";
import { effectCounter, orderEventWebhook, redisTestBed, simpleOrder } from "./support.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ORDERS = 200;
const SUBSCRIPTIONS = 60;

describe("reconcile: the simulator drops 20% of what it sends; one repair run makes up for every dropped order event", () => {
  const { redis, prefix, cleanup } = redisTestBed("reconcile-loop");

  it("audit reports the gaps and runs nothing; repair runs each missing effect once; dropped renewals are overdue", async () => {
    const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
    cleanup.push(async () => store.close?.());
    const journal = redisJournal(redis, { prefix });
    const ledger = redisOrderLedger(redis, { prefix });
    const effects = effectCounter();
    const overdue: OverdueRenewal[] = [];
    // The clock the reconciler reads: moved a day and two hours on, past the first renewal's due time and its grace.
    let ahead = 0;
    const reconciler = createReconciler({
      client: { queryOrder: (...args) => client.queryOrder(...args) },
      ledger,
      store,
      journal,
      handlers: { onOrder: effects.handler, onOverdue: (gap) => void overdue.push(gap) },
      settleMs: 0,
      graceMs: HOUR,
      now: () => Date.now() + ahead,
      logger: silentLogger(),
    });
    const orderHook = await orderEventWebhook(store, reconciler.orderHandler(effects.handler));
    const subscriptionHook = await startWebhook({
      idempotency: store,
      onCreated: async () => {},
      onRenew: async () => {},
      onAny: reconciler.onAny,
    });
    cleanup.push(orderHook.close, subscriptionHook.close);
    const sim: PlatformSimulator = createPlatformSimulator({
      webhookUrl: subscriptionHook.url,
      timeScale: 0.001,
      seed: 43,
      chaos: { dropRate: 0.2, duplicateRate: 0.1 },
    });
    cleanup.push(() => sim.close());
    const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });

    const paid = new Set<string>();
    for (let index = 0; index < ORDERS; index++) {
      const order = await client.createOrder(simpleOrder(`loop-${prefix}-${index}`, orderHook.url));
      // Seven in ten are paid; the rest stay PAYER_ACTION_REQUIRED, which no event announces.
      if (index % 10 < 7) {
        sim.orders.pay(order.id);
        paid.add(order.id);
      }
    }
    const subscriptions = [];
    for (let index = 0; index < SUBSCRIPTIONS; index++)
      subscriptions.push(
        await sim.subscriptions.create({
          merchant_id: "M-LOOP",
          subscriber: buildSubscriber(),
          product: buildProduct(),
          periodMs: DAY,
        }),
      );
    for (const subscription of subscriptions) await subscription.renew();
    await sim.settled();

    const deliveries = sim.deliveries();
    const droppedOrderEvents = deliveries.filter((d) => d.kind === "order" && d.dropped).length;
    const missing = [...paid].filter((id) => !effects.counts.has(`${id}/COMPLETED`)).sort();
    expect(droppedOrderEvents).toBeGreaterThan(10);
    expect(missing).toHaveLength(droppedOrderEvents);
    // A renewal lost is found only for a subscription the merchant heard of: its created notification came.
    const lost = (type: string) =>
      new Set(deliveries.filter((d) => d.event_type === type && d.dropped).map((d) => d.subscription_id));
    const createdLost = lost("SUBSCRIPTION_CREATED");
    const expectedOverdue = [...lost("SUBSCRIPTION_RENEW")].filter((id) => !createdLost.has(id)).sort();
    expect(expectedOverdue.length).toBeGreaterThan(3);

    ahead = DAY + 2 * HOUR;
    const callsBefore = effects.calls();
    const audit = await reconciler.run();
    expect(audit.mode).toBe("audit");
    expect(audit.checked.orders).toBe(ORDERS);
    const orderGaps = (report: typeof audit) =>
      report.gaps.flatMap((gap) => (gap.kind === "order_status" ? [gap.order_id] : [])).sort();
    const overdueIn = (report: typeof audit) =>
      report.gaps.flatMap((gap) => (gap.kind === "renewal_overdue" ? [gap.subscription_id] : [])).sort();
    expect(orderGaps(audit)).toEqual(missing);
    expect(overdueIn(audit)).toEqual(expectedOverdue);
    expect(audit.repaired).toBe(0);
    expect(audit.errors).toEqual([]);
    // Audit: no handler ran, and nothing but the report was written (no claim of an order's status).
    expect(effects.calls()).toBe(callsBefore);
    for (const id of missing) expect(await store.get(orderStatusRecord({ id, status: "COMPLETED" }))).toBeUndefined();

    const repair = await reconciler.run({ mode: "repair" });
    expect(orderGaps(repair)).toEqual(missing);
    expect(repair.repaired).toBe(missing.length);
    expect(overdueIn(repair)).toEqual(expectedOverdue);
    const overdueGap = repair.gaps.find((gap) => gap.kind === "renewal_overdue");
    expect(overdueGap).toMatchObject({
      last_notification: { event_type: "SUBSCRIPTION_CREATED", execution_phase: "1" },
    });
    // Every paid order had its effect exactly once, live or reconciled; no unpaid order had one.
    for (const id of paid) expect(effects.counts.get(`${id}/COMPLETED`), id).toBe(1);
    expect(effects.counts.size).toBe(paid.size);
    expect((await store.get(orderStatusRecord({ id: missing[0]!, status: "COMPLETED" })))?.state).toBe("completed");

    // A third run has no order gap left: the closed orders are no longer checked, the unpaid ones are.
    const after = await reconciler.run({ mode: "repair" });
    expect(orderGaps(after)).toEqual([]);
    expect(after.checked.orders).toBe(ORDERS - paid.size);
    expect((await reconciler.reports()).map((report) => report.run_id)).toEqual([
      after.run_id,
      repair.run_id,
      audit.run_id,
    ]);
  });
});
