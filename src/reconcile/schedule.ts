import type { Queue } from "bullmq";
import type PgBoss from "pg-boss";
import type { Reconciler } from "./create-reconciler.js";
import type { ReconcileReport } from "./report.js";

/** Told of each scheduled run's report (a `busy` one too: another process had the lock), or of its failure. */
export interface ScheduleHooks {
  onReport?: (report: ReconcileReport) => void | Promise<void>;
  onError?: (err: unknown) => void;
}

/** A schedule this process takes part in; `close` stops this process's part. */
export interface ReconcileSchedule {
  close(): Promise<void>;
}

/** The name a queue's schedule and its jobs go by, unless given another. */
export const RECONCILE_JOB_NAME = "merchant-webhooks-reconcile";

async function runOnce(reconciler: Reconciler, hooks: ScheduleHooks): Promise<ReconcileReport> {
  const report = await reconciler.run();
  await hooks.onReport?.(report);
  return report;
}

/**
 * A run every `everyMs` from this process (the first after `everyMs`). A tick while this process's
 * previous run goes on is skipped; across processes the run lock keeps it to one run at a time (the
 * others answer `busy`).
 */
export function scheduleEvery(reconciler: Reconciler, options: { everyMs: number } & ScheduleHooks): ReconcileSchedule {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = runOnce(reconciler, options)
      .catch((err) => options.onError?.(err))
      .finally(() => (running = undefined));
  }, options.everyMs);
  timer.unref?.();
  return {
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Runs on the BullMQ queue the merchant already runs: a job scheduler (`upsertJobScheduler`, one per
 * id however many processes call this, so two schedulers make one job per tick) and a worker of
 * concurrency 1 on `queue`'s connection that runs the reconciler for each job. A job answered `busy`
 * (a run from elsewhere held the lock) completes: the next tick runs. `close` stops this process's
 * worker; `queue.removeJobScheduler(schedulerId)` stops the schedule itself.
 */
export async function scheduleOnBullmq(
  reconciler: Reconciler,
  options: { queue: Queue; schedulerId?: string } & ({ everyMs: number } | { pattern: string }) & ScheduleHooks,
): Promise<ReconcileSchedule> {
  const { Worker } = await import("bullmq");
  const { queue } = options;
  const id = options.schedulerId ?? RECONCILE_JOB_NAME;
  await queue.upsertJobScheduler(id, "pattern" in options ? { pattern: options.pattern } : { every: options.everyMs }, {
    name: RECONCILE_JOB_NAME,
    opts: { removeOnComplete: 100, removeOnFail: 100 },
  });
  const worker = new Worker(
    queue.name,
    async (job) => {
      if (job.name !== RECONCILE_JOB_NAME) return undefined;
      const report = await runOnce(reconciler, options);
      return { status: report.status, gaps: report.gaps.length, repaired: report.repaired };
    },
    { connection: queue.opts.connection, prefix: queue.opts.prefix, concurrency: 1 },
  );
  worker.on("failed", (_job, err) => options.onError?.(err));
  return { close: () => worker.close() };
}

/**
 * Runs on the merchant's pg-boss: a schedule (`boss.schedule`, a cron expression, minute granularity;
 * pg-boss keeps one schedule per name and sends one job per tick whichever instance's clock fires)
 * and a worker of the job. `close` stops this process's worker; `boss.unschedule(name)` the schedule.
 */
export async function scheduleOnPgBoss(
  reconciler: Reconciler,
  options: { boss: PgBoss; cron: string; name?: string } & ScheduleHooks,
): Promise<ReconcileSchedule> {
  const { boss } = options;
  const name = options.name ?? RECONCILE_JOB_NAME;
  await boss.createQueue(name);
  await boss.schedule(name, options.cron);
  await boss.work(name, async () => {
    try {
      await runOnce(reconciler, options);
    } catch (err) {
      options.onError?.(err);
      throw err;
    }
  });
  return { close: () => boss.offWork(name) };
}
