import { fileURLToPath } from "node:url";
import { createPaymentClient, type OrderEvent } from "merchant-webhooks/client";
import { createReconciler, redisJournal, redisOrderLedger } from "merchant-webhooks/reconcile";
import { redisStore } from "merchant-webhooks/redis";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { spawnWorker } from "../bullmq/fixtures/spawn-worker.js";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { redisTestBed, simpleOrder } from "./support.js";

const ORDERS = 12;
const HANG_AT = 5;
const script = fileURLToPath(new URL("./fixtures/reconcile-process.ts", import.meta.url));

describe("reconcile runs: one at a time across processes, and a killed run resumes from its checkpoint", () => {
  const { redis, newPrefix, cleanup } = redisTestBed("reconcile-runs");

  /** A simulator with `ORDERS` paid orders whose events never went out (no webhook_url), in a Redis ledger. */
  async function paidOrders(label: string) {
    const prefix = newPrefix(label);
    const sim = createPlatformSimulator({ seed: 3 });
    cleanup.push(() => sim.close());
    const ledger = redisOrderLedger(redis, { prefix });
    const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });
    const ids: string[] = [];
    for (let index = 0; index < ORDERS; index++) {
      const order = await client.createOrder(simpleOrder(`${label}-${prefix}-${index}`));
      sim.orders.pay(order.id);
      ids.push(order.id);
    }
    const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:`, leaseMs: 500 });
    cleanup.push(async () => store.close?.());
    return { prefix, sim, client, ledger, store, ids, journal: redisJournal(redis, { prefix }) };
  }

  it("two runs started together: one runs, the other answers busy and touches nothing", async () => {
    const { client, ledger, store, journal, ids } = await paidOrders("reconcile-single");
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const applied: string[] = [];
    const onOrder = async (event: OrderEvent) => {
      entered();
      await held;
      applied.push(event.order.id);
    };
    const options = { client, ledger, store, journal, mode: "repair" as const, settleMs: 0, logger: silentLogger() };
    const first = createReconciler({ ...options, handlers: { onOrder } });
    const second = createReconciler({ ...options, handlers: { onOrder } });
    const running = first.run();
    await inside;
    const busy = await second.run();
    expect(busy.status).toBe("busy");
    expect(busy.checked).toEqual({ orders: 0, subscriptions: 0 });
    release();
    const done = await running;
    expect(done.status).toBe("completed");
    expect(done.repaired).toBe(ORDERS);
    expect(applied.sort()).toEqual([...ids].sort());
    // Only the run that ran kept a report.
    expect((await journal.reports()).map((report) => report.run_id)).toEqual([done.run_id]);
  });

  it("a run SIGKILLed inside a handler is resumed by the next run from its checkpoint: every effect once", async () => {
    const { prefix, sim, ledger, store, journal, client, ids } = await paidOrders("reconcile-killed");
    const child = await spawnWorker(
      {
        REDIS_URL,
        PREFIX: prefix,
        BASE_URL: sim.baseUrl,
        HANG_AT: String(HANG_AT),
        LOCK_TTL_MS: "1000",
        LEASE_MS: "500",
      },
      { script },
    );
    await eventually(
      () =>
        new Promise<boolean>((resolve) =>
          child.child.stdout!.once("data", (chunk) => resolve(String(chunk).includes("hanging"))),
        ),
      20_000,
      "the child run to hang in its handler",
    );
    child.kill("SIGKILL");
    expect(await child.exited).toBeNull();

    const appliedHere: string[] = [];
    const reconciler = createReconciler({
      client,
      ledger,
      store,
      journal,
      mode: "repair",
      settleMs: 0,
      logger: silentLogger(),
      handlers: {
        onOrder: async (event) => {
          appliedHere.push(event.order.id);
          await redis.incr(`${prefix}effect:${event.order.id}`);
        },
      },
    });
    // The dead run's lock still stands until its time to live runs out: this process waits its turn.
    const firstTry = await reconciler.run();
    expect(firstTry.status).toBe("busy");
    let report = firstTry;
    await eventually(async () => (report = await reconciler.run()).status === "completed", 20_000, "the lock to lapse");

    expect(report.resumed_from).toBeDefined();
    // The report goes on from the checkpoint: the whole window counted once, the orders before it not asked again.
    expect(report.checked.orders).toBe(ORDERS);
    expect(report.repaired).toBe(ORDERS);
    expect(appliedHere).toHaveLength(ORDERS - HANG_AT + 1);
    for (const id of ids) expect(await redis.get(`${prefix}effect:${id}`), id).toBe("1");
    expect(await journal.checkpoint()).toBeUndefined();
  });
});
