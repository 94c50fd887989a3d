import type { ConnectionLogger, StoreConnection, StoreConnectionState } from "./store.js";

type Settled = "up" | "down" | "closed";

/**
 * The state machine behind a store's `connection`: the current state since when, the loggers that
 * watch it, and the callers waiting for it to settle. Each store feeds it from what it can observe
 * (ioredis events; a PostgreSQL pool's statements) and logs through it, once per change, with the
 * store's name and address on every line.
 */
export function connectionTracker(store: string, address: string, initial: "connecting" | "up") {
  let current: StoreConnectionState = { state: initial, since: Date.now() };
  const watchers = new Set<ConnectionLogger>();
  const waiters: Array<(state: Settled) => void> = [];

  const log = (level: "info" | "warn", fields: object, message: string) => {
    for (const logger of watchers) logger[level]({ store, address, ...fields }, message);
  };
  /** Move to `state`, waking whoever waits for it to settle; returns the state left. */
  const enter = (state: StoreConnectionState["state"], error?: string): StoreConnectionState => {
    const previous = current;
    current = { state, since: Date.now(), ...(error === undefined ? {} : { error }) };
    if (state !== "connecting") for (const resolve of waiters.splice(0)) resolve(state);
    return previous;
  };

  return {
    log,
    enter,
    /** The state now, to read or to note a first error on while already down. */
    current: () => current,
    /** Up: logged as `<name> ready`, or, back from down, with how long it was away. */
    up(name: string): void {
      if (current.state === "up") return;
      const previous = enter("up");
      if (previous.state !== "down") {
        log("info", {}, `${name} ready`);
        return;
      }
      const downMs = Date.now() - previous.since;
      log("info", { down_ms: downMs }, `${name} ready again after ${Math.round(downMs / 100) / 10} s unreachable`);
    },
    /** The `StoreConnection` a store exposes; `whileConnecting` runs when someone waits to settle. */
    connection(whileConnecting?: () => void): StoreConnection {
      return {
        address,
        state: () => ({ ...current }),
        watch(logger) {
          watchers.add(logger);
          return () => watchers.delete(logger);
        },
        settled() {
          if (current.state !== "connecting") return Promise.resolve(current.state);
          const settled = new Promise<Settled>((resolve) => waiters.push(resolve));
          whileConnecting?.();
          return settled;
        },
      };
    },
  };
}
