import { createPaymentClient } from "merchant-webhooks/client";
import { createReconciler, redisJournal, redisOrderLedger } from "merchant-webhooks/reconcile";
import { redisStore } from "merchant-webhooks/redis";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, sleep } from "../support/redis.js";
import { effectCounter, orderEventOf, orderEventWebhook, redisTestBed, simpleOrder } from "./support.js";

const ROUNDS = 200;

describe("reconcile: live delivery and reconciliation race for the same order status", () => {
  const { redis, prefix, cleanup } = redisTestBed("reconcile-race");

  it(`${ROUNDS} times: the live event and a repair run go at once, and the effect happens once each time`, async () => {
    const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
    cleanup.push(async () => store.close?.());
    const ledger = redisOrderLedger(redis, { prefix });
    const sim = createPlatformSimulator({ seed: 7 });
    cleanup.push(() => sim.close());
    const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });
    const effects = effectCounter();
    // A gate the next handler run (live or reconciled) waits at, so a round can hold one path inside its claim.
    let gate: { entered: () => void; release: Promise<void> } | undefined;
    const holdNext = () => {
      let release!: () => void;
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      gate = { entered, release: new Promise<void>((resolve) => (release = resolve)) };
      return { inside, release };
    };
    const onOrder: typeof effects.handler = async (event, ctx) => {
      const held = gate;
      gate = undefined;
      if (held) {
        held.entered();
        await held.release;
      }
      await effects.handler(event, ctx);
    };
    const reconciler = createReconciler({
      client,
      ledger,
      store,
      journal: redisJournal(redis, { prefix }),
      handlers: { onOrder },
      mode: "repair",
      settleMs: 0,
      logger: silentLogger(),
    });
    const hook = await orderEventWebhook(store, reconciler.orderHandler(onOrder));
    cleanup.push(hook.close);

    /** Deliver like the platform: again until answered processed (a 409/500 while the other path holds it). */
    let refused = 0;
    const deliver = async (body: unknown) => {
      for (; ; refused++, await sleep(5)) {
        const response = await fetch(hook.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const answer = (await response.json()) as { processed: boolean };
        if (response.ok && answer.processed) return;
      }
    };

    let repairedByRun = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // No webhook_url: the test is the platform, delivering the event itself at the moment it picks.
      const created = await client.createOrder(simpleOrder(`race-${prefix}-${round}`));
      const paid = sim.orders.pay(created.id);
      const event = orderEventOf(paid, `EVT-RACE-${round}`);
      let report: Awaited<ReturnType<typeof reconciler.run>>;
      if (round % 3 === 0) {
        // Both at once, the live one a little later in some rounds.
        [, report] = await Promise.all([sleep(round % 4).then(() => deliver(event)), reconciler.run()]);
      } else if (round % 3 === 1) {
        // The run holds the order's status while the live event arrives: refused until the run is done.
        const { inside, release } = holdNext();
        const running = reconciler.run();
        await inside;
        const before = refused;
        const live = deliver(event);
        await eventually(() => refused > before, 10_000, "a live delivery refused while the run holds the order");
        release();
        [report] = await Promise.all([running, live]);
        expect(report.repaired).toBe(1);
      } else {
        // The live event holds it while the run comes: the run leaves it to the live one.
        const { inside, release } = holdNext();
        const live = deliver(event);
        await inside;
        report = await reconciler.run();
        expect(report.repaired).toBe(0);
        expect(report.errors.map((error) => error.message)).toEqual([
          "being applied by a live delivery; the next run checks it again",
        ]);
        release();
        await live;
      }
      expect(report.status).toBe("completed");
      repairedByRun += report.repaired;
      expect(effects.counts.get(`${created.id}/COMPLETED`), `round ${round}`).toBe(1);
      // A late copy of the live event, after either path applied it: answered processed, no second effect.
      await deliver(orderEventOf(paid, `EVT-RACE-LATE-${round}`));
      expect(effects.counts.get(`${created.id}/COMPLETED`), `round ${round}, late`).toBe(1);
    }
    expect(effects.calls()).toBe(ROUNDS);
    expect(repairedByRun).toBeGreaterThanOrEqual(Math.floor(ROUNDS / 3));
    console.log(`reconcile race: the run applied ${repairedByRun} of ${ROUNDS}, live delivery the rest`);
  });
});
