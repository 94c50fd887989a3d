import { memoryStore } from "merchant-webhooks";
import { createPaymentClient, memoryOrderLedger } from "merchant-webhooks/client";
import { createReconciler } from "merchant-webhooks/reconcile";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { type InstalledOtel, installOtel } from "../telemetry/fixtures/otel.js";
import { effectCounter, simpleOrder } from "./support.js";

describe("reconcile metrics", () => {
  let otel: InstalledOtel;
  beforeAll(() => {
    otel = installOtel();
  });
  afterAll(() => otel.uninstall());

  it("counts the gaps of each run by kind, mode and whether repaired", async () => {
    const sim = createPlatformSimulator({ seed: 9 });
    const ledger = memoryOrderLedger();
    const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });
    for (let index = 0; index < 3; index++)
      sim.orders.pay((await client.createOrder(simpleOrder(`metric-${index}`))).id);
    const reconciler = createReconciler({
      client,
      ledger,
      store: memoryStore(),
      handlers: { onOrder: effectCounter().handler },
      settleMs: 0,
      logger: silentLogger(),
    });
    await reconciler.run();
    await reconciler.run({ mode: "repair" });
    await sim.close();
    const gaps = (mode: string, repaired: boolean) =>
      otel.sum("webhook.reconcile.gaps", {
        "webhook.reconcile.gap_kind": "order_status",
        "webhook.reconcile.mode": mode,
        "webhook.reconcile.repaired": repaired,
      });
    expect(await gaps("audit", false)).toBe(3);
    expect(await gaps("repair", true)).toBe(3);
    expect(await otel.sum("webhook.reconcile.gaps")).toBe(6);
  });
});
