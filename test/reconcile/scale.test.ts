import { createServer } from "node:http";
import express from "express";
import { eventReceiverOptions } from "merchant-webhooks";
import { createPaymentClient, orderEventSchema } from "merchant-webhooks/client";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { createReconciler, type OverdueRenewal, redisJournal, redisOrderLedger } from "merchant-webhooks/reconcile";
import { redisStore } from "merchant-webhooks/redis";
import { createPlatformSimulator, type PlatformSimulator } from "merchant-webhooks/simulator";
import { buildProduct, buildSubscriber } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { serveOnLoopback } from "../cli/run-cli.js";
import { silentLogger } from "../support/capture-logger.js";
import { REDIS_URL } from "../support/redis.js";
import { effectCounter, redisTestBed, simpleOrder } from "./support.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ORDERS = 500;
const SUBSCRIPTIONS = 100;

describe("reconcile at the issue's scale: 500 orders, 100 subscriptions, 20% dropped, the receiver down a while", () => {
  const { redis, prefix, cleanup } = redisTestBed("reconcile-scale");

  it("after one repair run every final order had its effect once, and exactly the lost renewals are overdue", async () => {
    const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
    cleanup.push(async () => store.close?.());
    const ledger = redisOrderLedger(redis, { prefix });
    const effects = effectCounter();
    const reconciledIds = new Set<string>();
    const overdue: OverdueRenewal[] = [];
    let ahead = 0;
    const reconciler = createReconciler({
      client: { queryOrder: (...args) => client.queryOrder(...args) },
      ledger,
      store,
      journal: redisJournal(redis, { prefix }),
      handlers: {
        onOrder: async (event, ctx) => {
          if (event.reconciled) reconciledIds.add(event.order.id);
          await effects.handler(event, ctx);
        },
        onOverdue: (gap) => void overdue.push(gap),
      },
      mode: "repair",
      settleMs: 0,
      now: () => Date.now() + ahead,
      logger: silentLogger(),
    });

    // Both receivers behind one switch: while down, every request is answered 503 before the receiver.
    let down = false;
    const app = express();
    app.use((_request, response, next) => (down ? void response.status(503).end() : next()));
    app.post(
      "/orders",
      subscriptionWebhook({
        ...eventReceiverOptions({
          schema: orderEventSchema,
          idempotency: store,
          handler: reconciler.orderHandler(effects.handler),
        }),
        logger: silentLogger(),
      }),
    );
    app.post(
      "/hook",
      subscriptionWebhook({
        idempotency: store,
        onCreated: async () => {},
        onRenew: async () => {},
        onAny: reconciler.onAny,
        logger: silentLogger(),
      }),
    );
    const hook = await serveOnLoopback(createServer(app));
    cleanup.push(hook.close);
    const orderHook = hook.url.replace(/\/hook$/, "/orders");
    const sim: PlatformSimulator = createPlatformSimulator({
      webhookUrl: hook.url,
      timeScale: 0.001,
      retrySchedule: [0, 1_000, 2_000],
      seed: 4343,
      chaos: { dropRate: 0.2 },
    });
    cleanup.push(() => sim.close());
    const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });

    /** Runs `part` with the receivers down, until every delivery it caused has used up its retries. */
    const whileDown = async (part: () => Promise<void>) => {
      await sim.settled();
      down = true;
      await part();
      await sim.settled();
      down = false;
    };
    const paid = new Set<string>();
    const placeOrders = async (from: number, to: number) => {
      for (let index = from; index < to; index++) {
        const order = await client.createOrder(simpleOrder(`scale-${prefix}-${index}`, orderHook));
        // Seven in ten are paid (COMPLETED, final); the rest stay PAYER_ACTION_REQUIRED, which no event announces.
        if (index % 10 < 7) {
          sim.orders.pay(order.id);
          paid.add(order.id);
        }
      }
    };
    await placeOrders(0, 200);
    await whileDown(() => placeOrders(200, 300));
    await placeOrders(300, ORDERS);

    const subscriptions: Awaited<ReturnType<typeof sim.subscriptions.create>>[] = [];
    for (let index = 0; index < SUBSCRIPTIONS; index++)
      subscriptions.push(
        await sim.subscriptions.create({
          merchant_id: "M-SCALE",
          subscriber: buildSubscriber(),
          product: buildProduct(),
          periodMs: DAY,
        }),
      );
    await sim.settled();
    const renew = async (from: number, to: number) => {
      for (const subscription of subscriptions.slice(from, to)) await subscription.renew();
    };
    await renew(0, 40);
    await whileDown(() => renew(40, 60));
    await renew(60, SUBSCRIPTIONS);
    await sim.settled();

    // What the platform never got through: dropped by chaos, or retried out while the receiver was down.
    const deliveries = sim.deliveries();
    const lost = deliveries.filter((delivery) => !delivery.delivered);
    expect(lost.some((delivery) => delivery.dropped)).toBe(true);
    expect(lost.some((delivery) => !delivery.dropped && delivery.kind === "order")).toBe(true);
    expect(lost.some((delivery) => !delivery.dropped && delivery.event_type === "SUBSCRIPTION_RENEW")).toBe(true);
    const lostOf = (type: string) =>
      new Set(lost.filter((delivery) => delivery.event_type === type).map((delivery) => delivery.subscription_id));
    // A lost renewal is found only for a subscription the merchant heard of: its created notification came.
    const createdLost = lostOf("SUBSCRIPTION_CREATED");
    const expectedOverdue = [...lostOf("SUBSCRIPTION_RENEW")].filter((id) => !createdLost.has(id)).sort();
    const missing = [...paid].filter((id) => !effects.counts.has(`${id}/COMPLETED`)).sort();
    expect(missing.length).toBe(lost.filter((delivery) => delivery.kind === "order").length);

    ahead = DAY + 2 * HOUR;
    const report = await reconciler.run();
    expect(report.status).toBe("completed");
    expect(report.checked.orders).toBe(ORDERS);
    expect(report.errors).toEqual([]);
    const orderGaps = report.gaps.flatMap((gap) => (gap.kind === "order_status" ? [gap.order_id] : [])).sort();
    expect(orderGaps).toEqual(missing);
    expect(report.repaired).toBe(missing.length);
    expect([...reconciledIds].sort()).toEqual(missing);
    // Every order that reached a final state had its effect exactly once, live or reconciled; no other order had one.
    for (const id of paid) expect(effects.counts.get(`${id}/COMPLETED`), id).toBe(1);
    expect(effects.counts.size).toBe(paid.size);
    // Every lost renewal the merchant can know of is overdue, and nothing else.
    const overdueIds = report.gaps.flatMap((gap) => (gap.kind === "renewal_overdue" ? [gap.subscription_id] : []));
    expect(overdueIds.sort()).toEqual(expectedOverdue);
    expect(overdue.map((gap) => gap.subscription_id).sort()).toEqual(expectedOverdue);
    console.log(
      `reconcile scale: ${paid.size} final orders, ${paid.size - missing.length} applied live, ${missing.length} reconciled; ` +
        `${lost.length} deliveries lost (${lost.filter((delivery) => delivery.dropped).length} dropped); ${expectedOverdue.length} renewals overdue`,
    );
  });
});
