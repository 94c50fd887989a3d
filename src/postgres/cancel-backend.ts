import type { Client, ClientConfig, Pool, PoolClient } from "pg";
import { withTimeout } from "../shared/time-limit.js";

/**
 * Cancels the statement a timed-out handler left running, with `pg_cancel_backend` from one connection of
 * its own, made with the pool's settings but outside it: when every pooled client is stuck behind such a
 * statement, a check-out to cancel them would wait behind them too. Cancels asked for while one is sent
 * go together in the next, so the store never holds more than one connection beyond the pool's `max`,
 * and the connection is ended as soon as none is waiting (timeouts are rare; an idle connection would
 * keep the process alive).
 */
export function backendCanceller(pool: Pool, timeoutMs: number) {
  const pending: number[] = [];
  let running: Promise<void> | undefined;

  async function drain(): Promise<void> {
    // pg's pool keeps the class it makes clients with, and the settings it makes them from.
    const { Client: ClientClass, options } = pool as Pool & { Client: typeof Client; options?: ClientConfig };
    const client = new ClientClass(options ?? {});
    // A dropped connection emits `error`; unheard, it would end the process.
    client.on("error", () => {});
    try {
      await withTimeout(client.connect(), timeoutMs, () => new Error("no connection to cancel with"));
      while (pending.length > 0) {
        const pids = pending.splice(0);
        await withTimeout(
          client.query("SELECT pg_cancel_backend(pid) FROM unnest($1::int[]) AS pid", [pids]),
          timeoutMs,
          () => new Error("cancel took too long"),
        );
      }
    } catch {
      // Best effort: the statement's own `statement_timeout` still ends it.
      pending.length = 0;
    } finally {
      // No await since the loop last found nothing pending: a cancel asked for from now starts a new drain.
      running = undefined;
      void client.end().catch(() => {});
    }
  }

  /**
   * Cancel the statement `client` runs now with the protocol's own request (its `processID` and
   * `secretKey`, on a connection of its own that does not log in): PostgreSQL cancels only the session
   * whose key it is, and a pooler forwards it to the server connection running the client's
   * transaction. By process id (`cancel`), a client behind a pooler names the pooler's made-up id,
   * no server process, or by chance another's; and the cancelling statement would wait for a server
   * connection of its own, where every one may be running such a statement. Resolves once the server
   * has closed the request's connection, or given up on.
   */
  function cancelSession(session: PoolClient): Promise<void> {
    const { processID, secretKey } = session as PoolClient & { processID?: unknown; secretKey?: unknown };
    if (typeof processID !== "number" || typeof secretKey !== "number") return Promise.resolve();
    const { Client: ClientClass, options } = pool as Pool & { Client: typeof Client; options?: ClientConfig };
    const { connection, host, port } = new ClientClass(options ?? {}) as Client & { connection: CancelConnection };
    const sent = new Promise<void>((resolve) => {
      connection.on("error", () => resolve());
      connection.once("end", () => resolve());
      connection.once("connect", () => connection.cancel(processID, secretKey));
      connection.connect(host.startsWith("/") ? `${host}/.s.PGSQL.${port}` : port, host);
    });
    return withTimeout(sent, timeoutMs, () => new Error("cancel took too long"))
      .catch(() => {})
      .finally(() => connection.end());
  }

  return {
    cancelSession,
    /** Cancel whatever statement backend `pid` runs now; resolves once sent, or given up on. */
    cancel(pid: number): Promise<void> {
      pending.push(pid);
      running ??= drain();
      return running;
    },
  };
}

/** pg's connection (not in its types): the protocol's cancel request on a socket of its own. */
interface CancelConnection {
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  end(): void;
  on(event: "error", listener: () => void): void;
  once(event: "connect" | "end", listener: () => void): void;
}

export type BackendCanceller = ReturnType<typeof backendCanceller>;
