import type { PoolClient, QueryConfig } from "pg";
import { MerchantWebhooksError } from "../shared/errors.js";

/** A query through `ctx.transaction` after its run settled: the transaction is not the handler's any more. */
export class TransactionClosedError extends MerchantWebhooksError {
  override name = "TransactionClosedError";
  declare readonly code: "MW_TRANSACTION_CLOSED";
  constructor() {
    super(
      "MW_TRANSACTION_CLOSED",
      "ctx.transaction is closed: the handler's run has settled, so this statement would land outside its transaction (await every query before the handler returns)",
    );
  }
}

/** `BEGIN`, `COMMIT`, `ROLLBACK` and the like through `ctx.transaction`: the library owns the transaction. */
export class TransactionControlError extends MerchantWebhooksError {
  override name = "TransactionControlError";
  declare readonly code: "MW_TRANSACTION_CONTROL";
  constructor(statement: string) {
    super(
      "MW_TRANSACTION_CONTROL",
      `ctx.transaction refuses ${statement}: the library begins and ends this transaction, with the notification's record in it (use SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT for a part to undo)`,
    );
  }
}

/**
 * The handler's transaction ended or failed under it: its locks are gone (PostgreSQL drops a failed
 * transaction's locks at once), so another delivery may run the notification now. What `ctx.signal`
 * aborts with; the run fails and nothing of it is kept.
 */
export class TransactionLostError extends MerchantWebhooksError {
  override name = "TransactionLostError";
  declare readonly code: "MW_TRANSACTION_LOST";
  constructor(how: "ended" | "failed") {
    super(
      "MW_TRANSACTION_LOST",
      how === "ended"
        ? "the handler's transaction was ended by a statement the handler sent (a COMMIT is refused by the database, a ROLLBACK undoes the run): the run fails and nothing of it is kept"
        : "a statement of the handler failed outside any savepoint: the transaction is aborted and its locks are gone, so the run fails (catch a statement's error inside SAVEPOINT ... ROLLBACK TO SAVEPOINT to go on)",
    );
  }
}

/** A transaction's client as a handler may hold it, and the switch that closes it when the run settles. */
export interface GuardedTransaction {
  /**
   * The client for `ctx.transaction`: every method of the pool client, but `query` refuses transaction
   * control and, once closed, everything; `release()` does nothing (the library gives the client back).
   */
  readonly handle: PoolClient;
  /** From now on every `query` through `handle` rejects with `MW_TRANSACTION_CLOSED`. */
  close(): void;
  /** Why the transaction was lost under the handler, if it was (see `guardTransaction`). */
  readonly lost: TransactionLostError | undefined;
  readonly closed: boolean;
}

/**
 * Guard an open transaction's client before a handler gets it. Without the guard, a write the handler
 * sends after returning (an un-awaited promise, a timer) lands in autocommit or in the next
 * notification's transaction on the same pooled client; a `COMMIT` it sends commits the claim early;
 * a query builder's `release()` hands the client back to the pool under the library's feet.
 *
 * The guard reads a statement's first keyword (after comments and blanks) to refuse transaction
 * control with a clear error, the transaction still usable. It is not what keeps the fence: what the
 * guard cannot read (several statements in one string on a pg without `queryMode`, a `pg.Query`, the
 * raw connection) meets the database's own fence (see fence-sql.ts). The guard also watches the
 * server's word on the transaction after each message (ReadyForQuery's status): out of the transaction
 * (a `ROLLBACK`, or a `COMMIT` the fence refused), or failed outside any savepoint (the server counts
 * them: SAVEPOINT and RELEASE in its replies), the transaction is lost, and `onLost` ends the run at
 * once; the guard refuses every query from then on.
 */
export function guardTransaction(
  client: PoolClient,
  onLost: (error: TransactionLostError) => void = () => {},
): GuardedTransaction {
  let closed = false;
  let lost: TransactionLostError | undefined;
  let savepoints = 0;
  const connection = (client as PoolClient & { connection?: NodeJS.EventEmitter }).connection;
  const onReady = (message: { status?: string }) => {
    if (closed || lost) return;
    if (message.status === "I") lost = new TransactionLostError("ended");
    else if (message.status === "E" && savepoints === 0) lost = new TransactionLostError("failed");
    if (lost) onLost(lost);
  };
  const onCommandComplete = (message: { text?: string }) => {
    const tag = message.text?.split(" ", 1)[0];
    if (tag === "SAVEPOINT") savepoints += 1;
    // RELEASE of the newest savepoint, as ORMs nest them; a ROLLBACK TO keeps its savepoint.
    else if (tag === "RELEASE") savepoints = Math.max(0, savepoints - 1);
  };
  connection?.on("readyForQuery", onReady);
  connection?.on("commandComplete", onCommandComplete);
  const query = (config: unknown, values?: unknown, callback?: unknown): unknown => {
    if (lost && !closed) return refuse(config, values, callback, lost);
    // The common call, a text with parameters: pg sends it with the extended protocol as it is (the
    // text a string, nothing to copy), and no callback to find.
    if (!closed && typeof config === "string" && callback === undefined && Array.isArray(values) && values.length > 0) {
      const refusal = controlError(config);
      return refusal ? Promise.reject(refusal) : client.query(config, values);
    }
    const cb = [values, callback].find((arg) => typeof arg === "function") as
      | ((err: Error | null, result?: unknown) => void)
      | undefined;
    const submittable = isSubmittable(config);
    // As pg reads its arguments: a text or a config, then values unless that place holds the callback.
    // Copied once, and the copy both checked and sent: a getter cannot show one text and send another.
    const sent: Partial<QueryConfig> & { queryMode?: string } = submittable
      ? {}
      : {
          ...(typeof config === "string" ? { text: config } : (config as object)),
          ...(Array.isArray(values) ? { values } : {}),
          queryMode: "extended",
        };
    if (sent.text !== undefined) sent.text = String(sent.text);
    const text = submittable ? (config as { text?: unknown }).text : sent.text;
    const refusal = closed ? new TransactionClosedError() : text === undefined ? undefined : controlError(String(text));
    if (refusal) return refuse(config, values, callback, refusal);
    if (submittable) return client.query(config as never);
    return cb ? client.query(sent as never, cb as never) : client.query(sent as never);
  };
  const overrides: Partial<Record<PropertyKey, unknown>> = {
    query,
    release: () => {},
  };
  const handle = new Proxy(client, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property];
      const value = Reflect.get(target, property, target);
      // Bound to the client: pg's methods read private state a proxy would not forward to them.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    handle,
    close: () => {
      closed = true;
      connection?.removeListener("readyForQuery", onReady);
      connection?.removeListener("commandComplete", onCommandComplete);
    },
    get closed() {
      return closed;
    },
    get lost() {
      return lost;
    },
  };
}

/** A query refused with `error`, answered the way it was asked: its submittable, its callback or a promise. */
function refuse(config: unknown, values: unknown, callback: unknown, error: Error): unknown {
  if (isSubmittable(config)) {
    process.nextTick(() => config.handleError?.(error));
    return config;
  }
  const cb = [values, callback].find((arg) => typeof arg === "function") as ((err: Error) => void) | undefined;
  if (cb) {
    process.nextTick(() => cb(error));
    return undefined;
  }
  return Promise.reject(error);
}

function isSubmittable(config: unknown): config is { submit: unknown; handleError?: (err: Error) => void } {
  return typeof (config as { submit?: unknown } | null)?.submit === "function";
}

/** The refusal for a statement that would begin, end or hand off the transaction; undefined for any other. */
export function controlError(text: string): TransactionControlError | undefined {
  const words = leadingWords(text, 3);
  const [first, second, third] = words;
  switch (first) {
    case "begin":
    case "commit": // also COMMIT PREPARED
    case "end":
    case "abort":
      return new TransactionControlError(first.toUpperCase());
    case "start":
      return new TransactionControlError("START TRANSACTION");
    case "prepare": // PREPARE TRANSACTION hands the transaction off to two-phase commit; PREPARE name AS ... is fine
      return second === "transaction" ? new TransactionControlError("PREPARE TRANSACTION") : undefined;
    case "rollback": {
      // ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name undoes a savepoint; any other ROLLBACK ends the transaction.
      const next = second === "work" || second === "transaction" ? third : second;
      return next === "to" ? undefined : new TransactionControlError("ROLLBACK");
    }
    default:
      return undefined;
  }
}

/**
 * The first `count` words of a statement, lower-cased, skipping what PostgreSQL's lexer skips before and
 * between them: blanks, `--` comments, nested `/* *\/` comments, and empty statements (`;`). A word is
 * what could be a keyword (ASCII letters and `_`); anything else ends the list.
 */
function leadingWords(text: string, count: number): string[] {
  const words: string[] = [];
  let at = 0;
  while (words.length < count && at < text.length) {
    const char = text[at]!;
    if (
      char === ";" ||
      char === " " ||
      char === "\t" ||
      char === "\n" ||
      char === "\r" ||
      char === "\f" ||
      char === "\v"
    ) {
      // Empty statements only before the first word: after it, `;` ends the statement.
      if (char === ";" && words.length > 0) break;
      at += 1;
    } else if (text.startsWith("--", at)) {
      // As PostgreSQL's lexer: a line comment ends at a newline or a carriage return.
      const end = text.slice(at).search(/[\n\r]/);
      at = end === -1 ? text.length : at + end + 1;
    } else if (text.startsWith("/*", at)) {
      at = afterBlockComment(text, at);
    } else {
      const word = /^[A-Za-z_]+/.exec(text.slice(at, at + 64));
      if (!word) break;
      words.push(word[0].toLowerCase());
      at += word[0].length;
    }
  }
  return words;
}

/** Index after the block comment opening at `at`; PostgreSQL's block comments nest. */
function afterBlockComment(text: string, at: number): number {
  let depth = 0;
  let i = at;
  while (i < text.length) {
    if (text.startsWith("/*", i)) {
      depth += 1;
      i += 2;
    } else if (text.startsWith("*/", i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else i += 1;
  }
  return text.length;
}
