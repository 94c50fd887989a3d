import { OUTCOMES } from "../dispatch/outcomes.js";
import type { ReplayResult } from "../testing/replay.js";

export interface ReplaySummary {
  sent: number;
  /** Acknowledged and handled (or acknowledged without a handler): not stale. */
  processed: number;
  /** Acknowledged as stale: older than its subscription's newest completed one, given to `onStale` if any. */
  stale: number;
  /** Answered but not processed, counted by HTTP status. */
  rejected: Map<number, number>;
  /** No answer at all: connection refused, reset or timed out. */
  failed: number;
  /** Entries of the source that could not be read, so were not sent. */
  unreadable?: number;
  /** Notifications sent more than once (`--retry`), whatever their last answer. */
  retried?: number;
}

export function summarize(results: readonly ReplayResult[]): ReplaySummary {
  const summary: ReplaySummary = { sent: results.length, processed: 0, stale: 0, rejected: new Map(), failed: 0 };
  for (const result of results) {
    if (result.attempts) summary.retried = (summary.retried ?? 0) + 1;
    if (result.status === 0) summary.failed++;
    else if (isStale(result)) summary.stale++;
    else if (isProcessed(result)) summary.processed++;
    else summary.rejected.set(result.status, (summary.rejected.get(result.status) ?? 0) + 1);
  }
  return summary;
}

/** Processed means what the platform would take it to mean: a 2xx answer saying `processed: true`. */
export function isProcessed(result: ReplayResult): boolean {
  return result.status >= 200 && result.status < 300 && result.answer?.processed === true;
}

/**
 * Acknowledged as stale: the receiver's stale answer (200, `processed: true`), which the platform takes
 * as delivered, though no event handler ran for it: counted apart from the processed ones.
 */
export function isStale(result: ReplayResult): boolean {
  return isProcessed(result) && result.answer?.message === OUTCOMES.stale.message;
}

export const rejectedTotal = (summary: ReplaySummary) => [...summary.rejected.values()].reduce((a, b) => a + b, 0);

/**
 *   result          count
 *   sent               12
 *   processed           9
 *   stale               1
 *   rejected            1
 *     status 401        1
 *   failed              1
 */
export function formatSummaryTable(summary: ReplaySummary): string {
  const rows: [string, number][] = [
    ["sent", summary.sent],
    ["processed", summary.processed],
    ["stale", summary.stale],
    ["rejected", rejectedTotal(summary)],
    ...[...summary.rejected.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]): [string, number] => [`  status ${status}`, count]),
    ["failed", summary.failed],
    ...(summary.unreadable ? [["unreadable", summary.unreadable] as [string, number]] : []),
    ...(summary.retried ? [["sent again", summary.retried] as [string, number]] : []),
  ];
  const labelWidth = Math.max("result".length, ...rows.map(([label]) => label.length));
  const countWidth = Math.max("count".length, ...rows.map(([, count]) => String(count).length));
  const line = (label: string, count: string) => `${label.padEnd(labelWidth)}  ${count.padStart(countWidth)}\n`;
  return line("result", "count") + rows.map(([label, count]) => line(label, String(count))).join("");
}
