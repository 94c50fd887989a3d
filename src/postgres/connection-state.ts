import type { Pool } from "pg";
import { connectionTracker } from "../idempotency/connection-tracker.js";
import type { StoreConnection } from "../idempotency/store.js";

/** What the store's statements report, for the connection state. */
export interface ConnectionReports {
  /** A statement was answered. */
  answered(): void;
  /** The database could not be reached or did not answer in time. */
  unreachable(message: string): void;
}

/**
 * The pool's state as the store sees it through its own statements (a pool has no connection of its
 * own to watch): up after an answer, down after a failed check-out or a statement past its time
 * limit, logged once per change. `settled()` pings once if nothing has been asked yet, so a receiver
 * warns at start when the database is away.
 */
export function poolConnection(
  pool: Pool,
  ping: () => Promise<unknown>,
  startupProblem: (err: unknown) => string | undefined = () => undefined,
): StoreConnection & ConnectionReports {
  const tracker = connectionTracker("postgres", addressOf(pool), "connecting");
  // The start-up ping's failure, when it is one the database answered (tables never migrated), is said
  // at start too: otherwise "postgresql ready" is all a forgotten migrate() leaves in the log.
  const startupPing = () =>
    void ping().catch((err) => {
      const problem = startupProblem(err);
      if (problem) tracker.log("warn", {}, problem);
    });
  return {
    ...tracker.connection(startupPing),
    answered: () => tracker.up("postgresql"),
    unreachable(message) {
      if (tracker.current().state === "down") return;
      tracker.enter("down", message);
      tracker.log("warn", { err: message }, "postgresql unreachable");
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
