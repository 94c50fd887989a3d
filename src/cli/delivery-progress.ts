import type { AttemptOutcome } from "../simulator/deliverer.js";
import type { DeliveryAttempt, DeliveryRecord } from "../simulator/delivery-log.js";
import type { CliIo } from "./args.js";
import { printable } from "./printable.js";

export interface DeliveryCounts {
  /** Attempts made. */
  sent: number;
  /** Deliveries answered `processed: true`. */
  acknowledged: number;
  /** Attempts not acknowledged, with attempts left: each is sent again on the schedule. */
  retried: number;
  /** Deliveries whose schedule ran out. */
  failed: number;
}

export const countsLine = (c: DeliveryCounts) =>
  `sent ${c.sent}  acknowledged ${c.acknowledged}  retried ${c.retried}  failed ${c.failed}`;

/**
 * What the simulator is doing, as it happens. On a terminal, one status line redrawn in place under
 * the command output; elsewhere (a pipe, a file, a CI log) one plain line per attempt, which reads
 * well there and can be grepped.
 */
export function deliveryProgress(io: CliIo) {
  const counts: DeliveryCounts = { sent: 0, acknowledged: 0, retried: 0, failed: 0 };
  let drawn = false;
  const clear = () => {
    if (drawn) io.out("\r\x1b[2K");
    drawn = false;
  };
  const draw = () => {
    io.out(`\r\x1b[2K${countsLine(counts)}`);
    drawn = true;
  };

  return {
    counts,
    onAttempt(delivery: Readonly<DeliveryRecord>, attempt: DeliveryAttempt, outcome: AttemptOutcome): void {
      counts.sent++;
      if (outcome === "delivered") counts.acknowledged++;
      else if (outcome === "retry") counts.retried++;
      else counts.failed++;
      if (io.tty) {
        draw();
        return;
      }
      const answer = attempt.status === 0 ? `no answer (${attempt.message})` : `${attempt.status} ${attempt.message}`;
      const next =
        outcome === "delivered" ? "acknowledged" : outcome === "retry" ? "will retry" : "failed, schedule used up";
      const what = `${printable(delivery.id)} ${printable(delivery.event_type)} attempt ${delivery.attempts.length}`;
      io.out(`${what}: ${printable(answer)}: ${next}\n`);
    },
    /** Write command output without the status line in the way; the line is drawn again below it. */
    print(text: string): void {
      if (!io.tty || text === "") {
        io.out(text);
        return;
      }
      clear();
      io.out(text);
      if (counts.sent > 0) draw();
    },
    /** Leave the terminal on a clean line. */
    finish(): void {
      clear();
    },
  };
}
