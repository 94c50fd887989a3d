import { startFaultRig } from "../test/faults/fault-rig.js";
import { runFaultScenario } from "../test/faults/fault-scenario.js";
import { summaryLine } from "../test/faults/summary.js";

/**
 * The fault suite's scenario (test/faults) outside vitest, with more notifications: two receivers on
 * their own persistent Redis, which is stopped, restarted and frozen under load while one receiver is
 * killed and replaced; a sender that retries every answer but `processed: true`. Prints the figures as
 * JSON, and exits non-zero if a notification was lost or ran twice where the kill does not explain it.
 *
 *   npx tsx bench/faults.ts        (FAULTS_NOTIFICATIONS, default 5,000; FAULTS_CONCURRENCY, default 16;
 *                                   REDIS_URL: the Redis that keeps the journal of effects, never stopped)
 */
const notifications = Number(process.env.FAULTS_NOTIFICATIONS ?? 5_000);
const concurrency = Number(process.env.FAULTS_CONCURRENCY ?? 16);
// As in the suite: short, so claims the killed receiver leaves behind run out within the run.
const leaseMs = 1_500;

const rig = await startFaultRig(leaseMs);
try {
  const { figures } = await runFaultScenario(rig, {
    notifications,
    concurrency,
    giveUpMs: 10 * 60_000,
    log: (line) => console.error(line),
  });
  console.error(summaryLine(figures));
  const holds =
    figures.acknowledged === notifications &&
    figures.lost === 0 &&
    figures.duplicates_unexplained === 0 &&
    figures.left_open_unexplained === 0 &&
    figures.second_delivery_acknowledged === notifications &&
    figures.records_not_completed === 0;
  console.log(JSON.stringify({ ...figures, holds, lease_ms: leaseMs, concurrency, node: process.version }, null, 2));
  if (!holds) process.exitCode = 1;
} finally {
  await rig.close();
}
