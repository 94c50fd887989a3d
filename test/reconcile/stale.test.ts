import { memoryStore } from "merchant-webhooks";
import { createPaymentClient, memoryOrderLedger, type QueriedOrder } from "merchant-webhooks/client";
import { createReconciler } from "merchant-webhooks/reconcile";
import { redisStore } from "merchant-webhooks/redis";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import type { IdempotencyStore } from "../../src/idempotency/store.js";
import { silentLogger } from "../support/capture-logger.js";
import { REDIS_URL } from "../support/redis.js";
import { effectCounter, orderEventOf, orderEventWebhook, redisTestBed, simpleOrder } from "./support.js";

/** The order as an event for a status it had a second before it reached its current one. */
const earlier = (order: QueriedOrder, status: string): QueriedOrder => ({
  ...order,
  status,
  update_time: new Date(Date.parse(order.update_time!) - 1_000).toISOString(),
});

describe("a late live event for an older status than the one applied is stale: answered processed, not run", () => {
  const { prefix, cleanup } = redisTestBed("reconcile-stale");
  const stores: [string, () => IdempotencyStore][] = [
    ["memory", () => memoryStore()],
    [
      "redis",
      () => {
        const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:${Math.random()}:` });
        cleanup.push(async () => store.close?.());
        return store;
      },
    ],
  ];

  for (const [name, makeStore] of stores)
    it(`${name}: after a reconciled COMPLETED, and after a live one, APPROVED comes late and has no effect`, async () => {
      const store = makeStore();
      const sim = createPlatformSimulator({ seed: 5 });
      cleanup.push(() => sim.close());
      const ledger = memoryOrderLedger();
      const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });
      const effects = effectCounter();
      const reconciler = createReconciler({
        client,
        ledger,
        store,
        handlers: { onOrder: effects.handler },
        mode: "repair",
        settleMs: 0,
        logger: silentLogger(),
      });
      const hook = await orderEventWebhook(store, reconciler.orderHandler(effects.handler));
      cleanup.push(hook.close);
      const deliver = async (body: unknown) => {
        const response = await fetch(hook.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        return { status: response.status, ...((await response.json()) as { processed: boolean }) };
      };

      // The event for COMPLETED never came: the reconciler applies it.
      const reconciled = sim.orders.pay((await client.createOrder(simpleOrder(`stale-${name}-1`))).id);
      expect((await reconciler.run()).repaired).toBe(1);
      // The one for APPROVED, sent before it, arrives now: stale. COMPLETED's own, late: a duplicate.
      expect(await deliver(orderEventOf(earlier(reconciled, "APPROVED"), "EVT-LATE-APPROVED-1"))).toMatchObject({
        status: 200,
        processed: true,
      });
      expect(await deliver(orderEventOf(reconciled, "EVT-LATE-COMPLETED-1"))).toMatchObject({ processed: true });
      expect(effects.counts).toEqual(new Map([[`${reconciled.id}/COMPLETED`, 1]]));

      // Live only: COMPLETED applied by its event, then APPROVED's event overtaken on the way.
      const live = sim.orders.pay((await client.createOrder(simpleOrder(`stale-${name}-2`))).id);
      expect(await deliver(orderEventOf(live, "EVT-LIVE-COMPLETED-2"))).toMatchObject({ processed: true });
      expect(await deliver(orderEventOf(earlier(live, "APPROVED"), "EVT-LATE-APPROVED-2"))).toMatchObject({
        processed: true,
      });
      // A newer status than the one applied still runs: REFUNDED after COMPLETED.
      const refunded = {
        ...live,
        status: "REFUNDED",
        update_time: new Date(Date.parse(live.update_time!) + 1_000).toISOString(),
      };
      expect(await deliver(orderEventOf(refunded, "EVT-LIVE-REFUNDED-2"))).toMatchObject({ processed: true });
      expect(effects.counts).toEqual(
        new Map([
          [`${reconciled.id}/COMPLETED`, 1],
          [`${live.id}/COMPLETED`, 1],
          [`${live.id}/REFUNDED`, 1],
        ]),
      );

      // The next run finds nothing to do: the stale APPROVED is not a gap, COMPLETED and REFUNDED are applied.
      const next = await reconciler.run();
      expect(next.gaps).toEqual([]);
      expect(effects.calls()).toBe(3);
    });
});
