import type { FaultFigures } from "./fault-scenario.js";

const tally = (answers: Record<string, number>) =>
  Object.entries(answers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, count]) => `${kind}×${count}`)
    .join(" ");

/** One line with the figures a reader checks first. */
export function summaryLine(figures: FaultFigures): string {
  return [
    `fault suite: ${figures.notifications} notifications, ${figures.deliveries} deliveries sent`,
    `answers ${tally(figures.answers)}`,
    `Redis restarts ${figures.redis_restarts}, Redis freezes ${figures.redis_freezes}, receivers killed ${figures.receivers_killed}` +
      ` (left ${figures.left_unfinished_by_kill} handlers unfinished, ${figures.unfinished_after_effect} past their effect)`,
    `left open after the load ${figures.left_open_after_load} (${figures.left_open_unexplained} unexplained)`,
    `second delivery of all: ${tally(figures.second_delivery_answers)}`,
    `lost ${figures.lost}`,
    `duplicates ${figures.duplicates} (${figures.duplicates_explained_by_kill} explained by the kill, ${figures.duplicates_unexplained} unexplained)`,
    `records not completed at the end ${figures.records_not_completed}, claimed more than once ${figures.records_retried}`,
    `${(figures.duration_ms / 1000).toFixed(1)} s`,
  ].join("; ");
}
