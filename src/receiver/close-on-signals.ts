import type { Logger } from "pino";
import { defaultLogger } from "../logging/logger.js";
import type { CloseOptions } from "../shared/close-options.js";

/** Anything with a `close`, such as a worker from `createWorker`, a receiver or a queue. */
export interface Closable {
  /** Given `{ timeoutMs }`; a `false` result means it did not finish cleanly in time. */
  close(options?: CloseOptions): Promise<unknown>;
  /** Work still running, when the target can tell (a receiver can): logged while it drains. */
  inFlight?(): number;
}

export interface CloseOnSignalsOptions {
  /**
   * Time each `close` gets. Default 20 s: a worker then needs up to 5 s more to hand unfinished jobs
   * back, which still ends inside the 30 s most container platforms allow between SIGTERM and SIGKILL.
   */
  timeoutMs?: number;
  /** Default SIGTERM (process managers, containers) and SIGINT (Ctrl-C). */
  signals?: readonly NodeJS.Signals[];
  /** Called with the exit code once closed. Default `process.exit`. */
  exit?: (code: number) => void;
  /** Where the shutdown is logged (signal received, draining, closed). Default the library's pino logger. */
  logger?: Pick<Logger, "info" | "warn">;
}

/**
 * On the first SIGTERM or SIGINT, close `targets` in order (say, the HTTP server's receiver first, then
 * the worker) and exit: 0 when everything closed in time, 1 otherwise. A second signal exits at once
 * with 1. Returns a function that removes the handlers.
 */
export function closeOnSignals(
  targets: Closable | readonly Closable[],
  options: CloseOnSignalsOptions = {},
): () => void {
  const list = Array.isArray(targets) ? (targets as readonly Closable[]) : [targets as Closable];
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const logger = options.logger ?? defaultLogger();
  const timeoutMs = options.timeoutMs ?? 20_000;
  let closing = false;

  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn({ signal }, "second signal received: exiting now without waiting for the close");
      return exit(1);
    }
    closing = true;
    logger.info({ signal, targets: list.length, timeout_ms: timeoutMs }, "signal received: closing");
    void closeAll(list, timeoutMs, logger).then((clean) => {
      if (clean) logger.info({ signal }, "closed: exiting");
      else
        logger.warn({ signal, timeout_ms: timeoutMs }, "closed with work unfinished or a close that failed: exiting 1");
      exit(clean ? 0 : 1);
    });
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}

async function closeAll(
  targets: readonly Closable[],
  timeoutMs: number,
  logger: Pick<Logger, "info" | "warn">,
): Promise<boolean> {
  let clean = true;
  for (const [index, target] of targets.entries()) {
    const inFlight = target.inFlight?.();
    if (inFlight !== undefined) logger.info({ target: index, in_flight: inFlight }, `draining ${inFlight} in flight`);
    try {
      // Work still in flight after the close ran out of time was abandoned: not a clean close.
      if ((await target.close({ timeoutMs })) === false || (target.inFlight?.() ?? 0) > 0) clean = false;
    } catch (err) {
      logger.warn({ target: index, err }, "close failed");
      clean = false;
    }
  }
  return clean;
}
