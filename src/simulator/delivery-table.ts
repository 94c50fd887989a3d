import type { DeliveryRecord, UndeliveredSummary } from "./delivery-log.js";

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    `${cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd()}\n`;
  return line(header) + rows.map(line).join("");
}

/**
 *   id                    event_type           attempt  status  processed  ms   message
 *   WH-3F2A...            SUBSCRIPTION_RENEW   1        503     no         4    store unavailable
 */
export function formatAttemptTable(records: readonly DeliveryRecord[]): string {
  const rows = records.flatMap((record) =>
    record.attempts.map((attempt, index) => [
      record.duplicate ? `${record.id} (dup)` : record.id,
      record.event_type,
      String(index + 1),
      attempt.status === 0 ? "-" : String(attempt.status),
      attempt.processed ? "yes" : "no",
      String(Math.round(attempt.ms)),
      attempt.message,
    ]),
  );
  return table(["id", "event_type", "attempt", "status", "processed", "ms", "message"], rows);
}

/** One line per delivery not (yet) answered `processed: true`, then the counts. */
export function formatUndelivered(summary: UndeliveredSummary): string {
  const rows = [...summary.exhausted, ...summary.pending].map((record) => {
    const last = record.attempts.at(-1);
    return [
      record.id,
      record.event_type,
      record.pending ? "pending" : "exhausted",
      String(record.attempts.length),
      last ? `${last.status || "-"} ${last.message}` : "-",
    ];
  });
  const counts = `undelivered: ${summary.exhausted.length} exhausted, ${summary.pending.length} pending\n`;
  return rows.length === 0 ? counts : table(["id", "event_type", "state", "attempts", "last answer"], rows) + counts;
}
