import type { Client, ClientConfig, Pool, PoolClient } from "pg";
import { withTimeout } from "../shared/time-limit.js";

/** The server process behind a checked-out client (pg keeps it from the connection's start-up). */
export const backendOf = (client: PoolClient): number | undefined => {
  const pid = (client as PoolClient & { processID?: unknown }).processID;
  return typeof pid === "number" ? pid : undefined;
};

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

  return {
    /** Cancel whatever statement backend `pid` runs now; resolves once sent, or given up on. */
    cancel(pid: number): Promise<void> {
      pending.push(pid);
      running ??= drain();
      return running;
    },
  };
}

export type BackendCanceller = ReturnType<typeof backendCanceller>;
