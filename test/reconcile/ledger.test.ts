import { memoryStore } from "merchant-webhooks";
import { createPaymentClient, memoryOrderLedger, PaymentApiError } from "merchant-webhooks/client";
import { createReconciler, memoryJournal } from "merchant-webhooks/reconcile";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { effectCounter, simpleOrder } from "./support.js";

describe("the order ledger: an order whose CreateOrder answer was lost is still reconciled", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0)) await close();
  });

  it("is known by its reference id, found with QueryOrder, and repaired once paid; one never created is dropped", async () => {
    const sim = createPlatformSimulator({ seed: 2 });
    cleanup.push(() => sim.close());
    const baseUrl = await sim.listen(0);
    const ledger = memoryOrderLedger();
    // The request reaches the platform, the answer does not: the merchant never learns the order id.
    const losingAnswers: typeof fetch = async (input, init) => {
      await fetch(input, init);
      throw new TypeError("fetch failed: connection reset");
    };
    const lossy = createPaymentClient({ baseUrl, ledger, fetch: losingAnswers, retry: { attempts: 1 } });
    await expect(lossy.createOrder(simpleOrder("lost-answer"))).rejects.toBeInstanceOf(PaymentApiError);
    // Refused before it was sent: never created at the platform, but remembered (it may have been).
    sim.failNext("/v1/payment/orders", 503);
    const failing = createPaymentClient({ baseUrl, ledger, retry: { attempts: 1 } });
    await expect(failing.createOrder(simpleOrder("never-created"))).rejects.toBeInstanceOf(PaymentApiError);
    expect(ledger.size).toBe(2);

    const client = createPaymentClient({ baseUrl });
    const effects = effectCounter();
    const reconciler = createReconciler({
      client,
      ledger,
      store: memoryStore(),
      journal: memoryJournal(),
      handlers: { onOrder: effects.handler },
      mode: "repair",
      settleMs: 0,
      logger: silentLogger(),
    });
    // Not paid yet: the status it was created in is announced by no event, so no gap.
    const first = await reconciler.run();
    expect(first.gaps).toEqual([]);
    expect(first.errors.map((error) => [error.id, error.message])).toEqual([
      ["never-created", "the platform has no such order: it was never created"],
    ]);
    expect(ledger.size).toBe(1);

    const order = await client.queryOrder({ reference_id: "lost-answer" });
    sim.orders.pay(order.id);
    const second = await reconciler.run();
    expect(second.gaps).toEqual([
      { kind: "order_status", order_id: order.id, reference_id: "lost-answer", status: "COMPLETED", repaired: true },
    ]);
    expect(effects.counts).toEqual(new Map([[`${order.id}/COMPLETED`, 1]]));
    expect(ledger.size).toBe(0);
  });
});
