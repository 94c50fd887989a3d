import type { Pool } from "pg";
import { connectionTracker } from "../idempotency/connection-tracker.js";
import type { StoreConnection } from "../idempotency/store.js";

/** What the store's statements report, for the connection state. */
export interface ConnectionReports {
  /** A statement was answered. */
  answered(): void;
  /** The database could not be reached or did not answer in time. */
  unreachable(message: string): void;
  /** A check-out waited past its time limit with every client of the pool busy: saturation, not an outage. */
  exhausted(waiting: number): void;
}

/** At most one "pool exhausted" line this often: under saturation every check-out would log one. */
const EXHAUSTED_LOG_INTERVAL_MS = 1_000;

/**
 * The pool's state as the store sees it through its own statements (a pool has no connection of its
 * own to watch): up after an answer, down after a failed check-out or a statement past its time
 * limit, logged once per change. `settled()` pings once if nothing has been asked yet, so a receiver
 * warns at start when the database is away.
 */
export function poolConnection(pool: Pool, ping: () => Promise<unknown>): StoreConnection & ConnectionReports {
  const tracker = connectionTracker("postgres", addressOf(pool), "connecting");
  let exhaustedLoggedAt = Number.NEGATIVE_INFINITY;
  const connection = tracker.connection(() => void ping().catch(() => {}));
  return {
    ...connection,
    watch(logger) {
      const unwatch = connection.watch(logger);
      // pg re-emits an idle client's dropped connection on the pool: with no listener, that ends the process.
      if ((pool as Partial<Pool>).listenerCount?.("error") === 0)
        logger.warn(
          { store: "postgres", address: connection.address },
          'the pg pool has no "error" listener: a dropped idle connection will end the process; add pool.on("error", (err) => logger.warn({ err }, "idle PostgreSQL client lost"))',
        );
      return unwatch;
    },
    answered: () => tracker.up("postgresql"),
    unreachable(message) {
      if (tracker.current().state === "down") return;
      tracker.enter("down", message);
      tracker.log("warn", { err: message }, "postgresql unreachable");
    },
    exhausted(waiting) {
      const now = Date.now();
      if (now - exhaustedLoggedAt < EXHAUSTED_LOG_INTERVAL_MS) return;
      exhaustedLoggedAt = now;
      tracker.log("warn", { waiting }, `pool exhausted (${waiting} waiting)`);
    },
  };
}

/** host:port of the pool's server, from its options or connection string; never the password. */
function addressOf(pool: Pool): string {
  const options: Partial<Pool["options"]> = (pool as Partial<Pool>).options ?? {};
  if (options.connectionString) {
    try {
      const url = new URL(options.connectionString);
      if (url.hostname) return `${url.hostname}:${url.port || 5432}`;
    } catch {
      // Not a URL (a key=value string): fall through to the host options.
    }
  }
  return `${options.host ?? process.env.PGHOST ?? "localhost"}:${options.port ?? process.env.PGPORT ?? 5432}`;
}
