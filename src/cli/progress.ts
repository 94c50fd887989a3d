import type { CliIo } from "./args.js";

export interface Progress {
  update(done: number): void;
  /** Clears the bar so what follows starts on a clean line. */
  finish(): void;
}

const REDRAW_MS = 80;
const noProgress: Progress = { update() {}, finish() {} };

/**
 * A one-line bar redrawn in place, on a terminal only: piped into a file or CI log, carriage returns
 * would leave one line per redraw.
 */
export function progressBar(io: CliIo, total: number, label = "sending"): Progress {
  if (!io.tty || total === 0) return noProgress;
  let last = 0;
  const draw = (done: number) => {
    const counts = ` ${done}/${total}`;
    const width = Math.max(10, Math.min(40, io.columns - label.length - counts.length - 10));
    const filled = Math.round((done / total) * width);
    const percent = String(Math.floor((done / total) * 100)).padStart(3);
    io.out(`\r${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}]${counts} ${percent}%`);
  };
  draw(0);
  return {
    update(done) {
      const now = Date.now();
      if (done < total && now - last < REDRAW_MS) return;
      last = now;
      draw(done);
    },
    finish() {
      io.out("\r\x1b[2K");
    },
  };
}
