import type { Logger } from "pino";
import type { IdempotencyStore } from "../idempotency/store.js";

/** How long the start-up check waits for the store's first answer before it stops waiting (silently). */
const START_CHECK_MS = 10_000;

/**
 * Log the store's connection changes through the receiver's logger, and warn once at start when the
 * store is unreachable, rather than leaving it to the first notification's 503. Returns a function
 * that stops both (called by `close`).
 */
export function watchStore(store: IdempotencyStore, logger: Logger): () => void {
  const connection = store.connection;
  if (!connection) return () => {};
  const unwatch = connection.watch(logger);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<"waiting">((resolve) => {
    timer = setTimeout(() => resolve("waiting"), START_CHECK_MS);
    timer.unref?.();
  });
  void Promise.race([connection.settled(), gaveUp]).then((state) => {
    clearTimeout(timer);
    if (stopped || state !== "down") return;
    const { error } = connection.state();
    logger.warn(
      { address: connection.address, ...(error ? { err: error } : {}) },
      `idempotency store unreachable at start (${connection.address}): notifications get 503 until it is back`,
    );
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
    unwatch();
  };
}
