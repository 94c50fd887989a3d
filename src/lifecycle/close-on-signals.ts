import type { CloseOptions } from "./close-options.js";

/** Anything with a `close`, such as a worker from `createWorker`, a receiver or a queue. */
export interface Closable {
  /** Given `{ timeoutMs }`; a `false` result means it did not finish cleanly in time. */
  close(options?: CloseOptions): Promise<unknown>;
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
  let closing = false;

  const onSignal = () => {
    if (closing) return exit(1);
    closing = true;
    void closeAll(list, options.timeoutMs ?? 20_000).then((clean) => exit(clean ? 0 : 1));
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}

async function closeAll(targets: readonly Closable[], timeoutMs: number): Promise<boolean> {
  let clean = true;
  for (const target of targets) {
    try {
      if ((await target.close({ timeoutMs })) === false) clean = false;
    } catch {
      clean = false;
    }
  }
  return clean;
}
