import { memoryStore } from "merchant-webhooks";
import { createPaymentClient, memoryOrderLedger } from "merchant-webhooks/client";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import { createReconciler } from "merchant-webhooks/reconcile";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { effectCounter, simpleOrder } from "./support.js";

describe("the console's reconciliation page", () => {
  it("lists each kept run with its gaps, what was repaired and its errors; JSON under /api", async () => {
    const sim = createPlatformSimulator({ seed: 17 });
    try {
      const ledger = memoryOrderLedger();
      const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });
      const paid = sim.orders.pay((await client.createOrder(simpleOrder("console-paid"))).id);
      // Asked for, refused before it reached the platform: the run reports it as an error.
      sim.failNext("/v1/payment/orders", 503);
      await expect(
        createPaymentClient({ baseUrl: sim.baseUrl, ledger, retry: { attempts: 1 } }).createOrder(
          simpleOrder("console-<never>"),
        ),
      ).rejects.toThrow();
      const store = memoryStore();
      const reconciler = createReconciler({
        client,
        ledger,
        store,
        handlers: { onOrder: effectCounter().handler },
        settleMs: 0,
        logger: silentLogger(),
      });
      const audit = await reconciler.run();
      const repair = await reconciler.run({ mode: "repair" });
      const handler = consoleHandler({
        admin: createAdmin({ idempotency: store }),
        authorize: () => true,
        reconcile: reconciler,
      });
      const get = (path: string) => handler(new Request(`http://console.test/console${path}`));

      const overview = await (await get("/")).text();
      expect(overview).toContain('href="/console/reconcile">Reconciliation</a>');
      const page = await get("/reconcile");
      expect(page.status).toBe(200);
      const body = await page.text();
      // Newest first: the repair run's row, then the audit's.
      expect(body.indexOf(`#run-${repair.run_id}`)).toBeLessThan(body.indexOf(`#run-${audit.run_id}`));
      expect(body).toContain(
        `order ${paid.id} (console-paid) is COMPLETED with no processed event <span class="state state-completed">repaired</span>`,
      );
      expect(body).toContain(`order ${paid.id} (console-paid) is COMPLETED with no processed event</li>`);
      // A reference id is shown escaped, never as markup.
      expect(body).toContain("error: order console-&lt;never&gt;: the platform has no such order");
      expect(body).not.toContain("console-<never>");
      const api = (await (await get("/api/reconcile")).json()) as { run_id: string; repaired: number }[];
      expect(api.map((report) => [report.run_id, report.repaired])).toEqual([
        [repair.run_id, 1],
        [audit.run_id, 0],
      ]);

      // Without a reconciler the page is not there, nor its link.
      const plain = consoleHandler({ admin: createAdmin({ idempotency: store }), authorize: () => true });
      expect((await plain(new Request("http://console.test/console/reconcile"))).status).toBe(404);
      expect(await (await plain(new Request("http://console.test/console/"))).text()).not.toContain("Reconciliation");
    } finally {
      await sim.close();
    }
  });
});
