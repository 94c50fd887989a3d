import type { Cluster, Command, Redis, RedisOptions } from "ioredis";
import { StoreUnavailableError } from "../idempotency/store.js";
import { CallTimeoutError, callDeadlines } from "./call-deadlines.js";
import { closeClient, connect, type RedisConnection } from "./connect.js";
import { evalCommand, isNoScript, type StoredScript, scriptCommand, scriptCommandOptions } from "./script-command.js";

export type RedisClient = Redis | Cluster;

/**
 * The longest a store call may take, connection wait included. A receiver holds the sender's request
 * while it waits, and an answer that is late is as useless as none: past this the call fails and the
 * receiver answers 503 with Retry-After. A healthy Redis answers in well under a millisecond, so 500 ms
 * only ever trips on a Redis that is down, paused or overloaded. Time in which this process could not
 * read an answer (its event loop held up by its own load or by other work on the machine) is not
 * counted, up to ten times the limit: see `callDeadlines`.
 */
export const DEFAULT_STORE_TIMEOUT_MS = 500;

/**
 * How much of this process's own event-loop delay a call may leave out of its time limit: a loaded
 * process reads its answers late, and that is not Redis's silence. Bounded, so a call still ends.
 */
const maxEventLoopLagMs = (timeoutMs: number) => timeoutMs * 10;

/**
 * The settings of the connection the store makes from a URL, and the ones to give a client lent to
 * the store. Nothing waits for a Redis that is away: no offline queue, no retry of a command that was
 * in flight when the connection dropped, and a bound on each command. The connection itself keeps
 * reconnecting (backoff capped at one second), so the same process works again as soon as Redis is back.
 */
export function failFastRedisOptions(timeoutMs = DEFAULT_STORE_TIMEOUT_MS): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // The store's own deadline (which leaves this process's event-loop delay out) ends a call first;
    // ioredis's timer, which cannot tell that delay from a silent Redis, is only the outer bound.
    commandTimeout: timeoutMs + maxEventLoopLagMs(timeoutMs),
    connectTimeout: 2_000,
    // Commands issued in the same tick go out in one write: under load, a fraction of the syscalls.
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times - 1, 5), 1_000),
  };
}

/** A Redis connection whose every call ends within the time limit, with a `StoreUnavailableError` if not answered. */
export interface FailFastConnection {
  readonly client: RedisClient;
  /**
   * Run `command` within the limit. `afterFailure` is called when the command may have reached Redis
   * without its answer reaching us (timed out, connection lost), so the caller can neutralize a write
   * that applies late.
   */
  run<T>(what: string, command: (client: RedisClient) => Promise<T>, afterFailure?: () => void): Promise<T>;
  /**
   * Run `script` on its keys and arguments within the limit, as `run` does, sent as one command of
   * its own (the store's hot path: see `script-command.ts`). Its reply as Redis gave it.
   */
  runScript(
    what: string,
    script: StoredScript,
    keysAndArgs: ReadonlyArray<string | number>,
    afterFailure?: () => void,
  ): Promise<unknown>;
  /** Closes a connection made from a URL; a lent client is left open for its owner. */
  close(): Promise<void>;
}

/**
 * Wrap a URL, ioredis options or cluster nodes (connected here, with `failFastRedisOptions`), or a lent
 * client (used as it is).
 *
 * A lent client may have an offline queue and no command timeout, so the limit is enforced here too:
 * no command is sent while the connection is known to be down (it would sit in the offline queue and
 * apply whenever Redis returns), and a caller never waits past the limit for a command that was sent.
 */
export function failFastConnection(
  connection: RedisConnection,
  timeoutMs = DEFAULT_STORE_TIMEOUT_MS,
): FailFastConnection {
  const { client, owned } = connect(connection, { defaults: failFastRedisOptions(timeoutMs) });
  const beforeDeadline = callDeadlines(maxEventLoopLagMs(timeoutMs));

  // Known down from a close until the next ready: calls then fail at once instead of waiting.
  let down = false;
  let waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const onReady = () => {
    down = false;
    for (const waiter of waiters.splice(0)) waiter.resolve();
  };
  const onClose = () => {
    down = true;
    for (const waiter of waiters.splice(0)) waiter.reject(new Error("connection closed"));
  };
  client.on("ready", onReady);
  client.on("close", onClose);
  client.on("end", onClose);
  // Errors reach callers as rejected calls; without a listener ioredis would also print each one.
  const onError = () => {};
  if (owned) client.on("error", onError);

  function usable(deadline: number): Promise<void> | void {
    if (client.status === "ready") return;
    if (client.status === "end" || down) throw new Error(`connection is ${client.status}`);
    // A client lent with lazyConnect, or the first connection still being made: wait for it, within the limit.
    if (client.status === "wait") client.connect().catch(() => {});
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(
        () => {
          waiters = waiters.filter((other) => other !== waiter);
          reject(new CallTimeoutError(`not connected within ${timeoutMs} ms`));
        },
        Math.max(0, deadline - performance.now()),
      );
      waiters.push(waiter);
    });
  }

  async function run<T>(
    what: string,
    command: (client: RedisClient) => Promise<T>,
    afterFailure?: () => void,
  ): Promise<T> {
    const deadline = performance.now() + timeoutMs;
    if (client.status !== "ready") await connected(what, deadline);
    try {
      return await beforeDeadline(command(client), deadline);
    } catch (err) {
      throw failed(what, err, afterFailure);
    }
  }

  /** Wait, within the deadline, for a client still connecting; a connection that cannot be used fails `what`. */
  async function connected(what: string, deadline: number): Promise<void> {
    try {
      const connecting = usable(deadline);
      if (connecting) await connecting;
    } catch (err) {
      throw unavailable(what, err);
    }
  }

  /** A call that failed or ran out of time, after `afterFailure` ran. */
  function failed(what: string, err: unknown, afterFailure?: () => void): StoreUnavailableError {
    afterFailure?.();
    // A silent Redis and a slow one differ in the socket: say which state it was in.
    return unavailable(what, err, err instanceof CallTimeoutError ? `; connection ${client.status}` : "");
  }

  const commandOptions = scriptCommandOptions(client);
  const cluster = (client as { isCluster?: boolean }).isCluster === true;
  const send = cluster ? (command: Command) => client.sendCommand(command) : batchedSend(client as Redis);

  async function runScript(
    what: string,
    script: StoredScript,
    keysAndArgs: ReadonlyArray<string | number>,
    afterFailure?: () => void,
  ): Promise<unknown> {
    // A cluster spreads the calls over its nodes: its own auto-pipelining batches them per node.
    if (cluster) {
      const call = client as unknown as Record<string, (...args: ReadonlyArray<string | number>) => Promise<unknown>>;
      return run(what, () => call[script.name]!(...keysAndArgs), afterFailure);
    }
    const deadline = performance.now() + timeoutMs;
    if (client.status !== "ready") await connected(what, deadline);
    let command = scriptCommand(script, keysAndArgs, commandOptions);
    const watch = beforeDeadline.watch(command, deadline);
    try {
      send(command);
      try {
        return await command.promise;
      } catch (err) {
        if (watch.settled || !isNoScript(err)) throw err;
      }
      // The server lost its scripts (flushed): the text loads it again.
      command = evalCommand(script, command);
      watch.command = command;
      send(command);
      return await command.promise;
    } catch (err) {
      throw failed(what, err, afterFailure);
    } finally {
      watch.settled = true;
    }
  }

  return {
    client,
    run,
    runScript,
    async close() {
      client.off("ready", onReady);
      client.off("close", onClose);
      client.off("end", onClose);
      if (!owned) return;
      await closeClient(client);
      client.off("error", onError);
    },
  };
}

/**
 * Send commands on one Redis so that those sent in the same turn of the event loop go out in one
 * write: the socket is corked at the first and uncorked in `setImmediate`, after the turn's I/O
 * callbacks (a read of many replies sends the next call of each in one write). Under load that is a
 * fraction of the system calls, as ioredis's auto-pipelining gives, without its pipeline object,
 * promise chain and callbacks per batch.
 */
function batchedSend(client: Redis): (command: Command) => void {
  let corked: Redis["stream"] | undefined;
  const uncork = () => {
    const stream = corked;
    corked = undefined;
    stream?.uncork();
  };
  return (command) => {
    const stream = client.stream;
    if (corked === undefined && stream) {
      stream.cork();
      corked = stream;
      setImmediate(uncork);
    }
    client.sendCommand(command);
  };
}

function unavailable(what: string, cause: unknown, state = ""): StoreUnavailableError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new StoreUnavailableError(`redis idempotency store: ${what} failed: ${reason}${state}`, { cause });
}
