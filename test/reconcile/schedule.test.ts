import { Queue } from "bullmq";
import { createPaymentClient, memoryOrderLedger } from "merchant-webhooks/client";
import {
  createReconciler,
  RECONCILE_JOB_NAME,
  type ReconcileReport,
  type ReconcileSchedule,
  redisJournal,
  scheduleEvery,
  scheduleOnBullmq,
  scheduleOnPgBoss,
} from "merchant-webhooks/reconcile";
import { redisStore } from "merchant-webhooks/redis";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { startBoss } from "../pg-boss/fixtures/boss.js";
import { silentLogger } from "../support/capture-logger.js";
import { dropSchema, testPool, uniqueSchema } from "../support/postgres.js";
import { eventually, REDIS_URL, sleep } from "../support/redis.js";
import { effectCounter, redisTestBed, simpleOrder } from "./support.js";

const PAID = 3;
const UNPAID = 4;

describe("scheduled runs: two schedulers, one run at a time, each effect once", () => {
  const { redis, newPrefix, cleanup } = redisTestBed("reconcile-schedule");

  /**
   * Two "processes" (two reconcilers over one Redis journal and store), with paid orders whose events
   * never came and unpaid ones each run asks about slowly, so runs last longer than the schedule's tick.
   */
  async function twoProcesses(label: string) {
    const prefix = newPrefix(label);
    const sim = createPlatformSimulator({ seed: 13 });
    cleanup.push(() => sim.close());
    const ledger = memoryOrderLedger();
    const client = createPaymentClient({ baseUrl: await sim.listen(0), ledger });
    for (let index = 0; index < PAID + UNPAID; index++) {
      const order = await client.createOrder(simpleOrder(`${label}-${index}`));
      if (index < PAID) sim.orders.pay(order.id);
    }
    const store = redisStore({ connection: REDIS_URL, prefix: `${prefix}idem:` });
    cleanup.push(async () => store.close?.());
    const effects = effectCounter();
    const reports: ReconcileReport[] = [];
    const reconciler = () =>
      createReconciler({
        client: {
          queryOrder: async (...args) => {
            await sleep(40);
            return client.queryOrder(...args);
          },
        },
        ledger,
        store,
        journal: redisJournal(redis, { prefix }),
        handlers: { onOrder: effects.handler },
        mode: "repair",
        settleMs: 0,
        logger: silentLogger(),
      });
    const hooks = { onReport: (report: ReconcileReport) => void reports.push(report) };
    const completed = () => reports.filter((report) => report.status === "completed");
    /** Wait for runs enough, stop both, and check no two completed runs overlapped and each effect was once. */
    async function check(schedules: ReconcileSchedule[]) {
      await eventually(() => completed().length >= 4, 30_000, "four completed runs");
      for (const schedule of schedules) await schedule.close();
      const runs = completed()
        .map((report) => [Date.parse(report.started_at), Date.parse(report.finished_at!)] as const)
        .sort((a, b) => a[0] - b[0]);
      for (let index = 1; index < runs.length; index++)
        expect(runs[index]![0]).toBeGreaterThanOrEqual(runs[index - 1]![1]);
      expect(effects.calls()).toBe(PAID);
      expect(completed().reduce((sum, report) => sum + report.repaired, 0)).toBe(PAID);
    }
    return { prefix, reconciler, hooks, check };
  }

  it("on an interval in each process", async () => {
    const { reconciler, hooks, check } = await twoProcesses("interval");
    await check([
      scheduleEvery(reconciler(), { everyMs: 50, ...hooks }),
      scheduleEvery(reconciler(), { everyMs: 50, ...hooks }),
    ]);
  });

  it("as a BullMQ job scheduler on the merchant's queue, set up by both processes", async () => {
    const { prefix, reconciler, hooks, check } = await twoProcesses("bullmq");
    const queues = [0, 1].map(
      () => new Queue("merchant-jobs", { connection: { url: REDIS_URL }, prefix: `${prefix}bull` }),
    );
    cleanup.push(async () => Promise.all(queues.map((queue) => queue.close())));
    const schedules = await Promise.all(
      queues.map((queue) => scheduleOnBullmq(reconciler(), { queue, everyMs: 100, ...hooks })),
    );
    expect(await queues[0]!.getJobSchedulersCount()).toBe(1);
    await check(schedules);
  });

  it("as a pg-boss schedule: one schedule by name, and its job runs the reconciler", async () => {
    const { reconciler } = await twoProcesses("pgboss");
    const pool = testPool(2);
    const schema = uniqueSchema("reconcile_boss");
    const boss = await startBoss(schema);
    cleanup.push(async () => {
      await boss.stop({ graceful: false, wait: true });
      await dropSchema(pool, schema);
      await pool.end();
    });
    const reports: ReconcileReport[] = [];
    const first = await scheduleOnPgBoss(reconciler(), {
      boss,
      cron: "*/5 * * * *",
      onReport: (r) => void reports.push(r),
    });
    const second = await scheduleOnPgBoss(reconciler(), {
      boss,
      cron: "*/5 * * * *",
      onReport: (r) => void reports.push(r),
    });
    expect((await boss.getSchedules()).map((schedule) => [schedule.name, schedule.cron])).toEqual([
      [RECONCILE_JOB_NAME, "*/5 * * * *"],
    ]);
    // A tick, as pg-boss's clock would send it.
    await boss.send(RECONCILE_JOB_NAME, {});
    await eventually(() => reports.length === 1, 30_000, "the scheduled job's run");
    expect(reports[0]).toMatchObject({ status: "completed", repaired: PAID });
    await first.close();
    await second.close();
  });
});
