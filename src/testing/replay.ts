import { createServer, type IncomingMessage, Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import type { Answer } from "../receiver/answer-and-log.js";
import { createReceiver, type Receiver } from "../receiver/create-receiver.js";
import type { ReceiverOptions } from "../receiver/options.js";
import { coded, optionError } from "../shared/errors.js";
import { readAnswer } from "./read-answer.js";
import { type ReplaySource, readSource, type SourceEntry } from "./read-source.js";

/** Headers to add for a body, e.g. a signature: see `hmacSigner` and `standardWebhooksSigner`. */
export type Signer = (body: string) => Record<string, string> | Promise<Record<string, string>>;

/** A Node request listener; an Express or Connect app is one. */
export type RequestListenerLike = (req: IncomingMessage, res: ServerResponse, ...rest: never[]) => unknown;

/**
 * Where notifications are replayed: receiver options (a receiver is built in-process and closed after),
 * a receiver, the URL of a running endpoint, an `http.Server`, or an app such as Express (started on an
 * ephemeral port for the replay and stopped after).
 */
export type ReplayTarget = ReceiverOptions | Receiver | string | URL | Server | RequestListenerLike;

export interface ReplayOptions {
  /** Notifications in flight at once. Default 1: in source order, as they were received. */
  concurrency?: number;
  /** Adds headers for each body, after the recorded ones: how replays pass a verifying endpoint. */
  sign?: Signer;
  /** Headers sent with every notification. */
  headers?: Record<string, string>;
  /** The webhook's path when the target is a server or an app. Default `/`. */
  path?: string;
  /** Give up on an HTTP answer after this long. Default 30 s. */
  timeoutMs?: number;
  /** Called as each answer arrives, e.g. to draw progress. */
  onResult?: (result: ReplayResult, done: number, total: number) => void;
  /**
   * Send a notification again when its answer says to try later (408, 409, 425, 429, 500, 502, 503,
   * 504, or no answer), as the platform would: up to `attempts` more times, each after the answer's
   * `Retry-After` (else 1 s, doubling), and never waiting longer than `maxWaitMs` (default 30 s) at once.
   * Needed to replay concurrently into a receiver with `ordering`, which answers 409 by design.
   */
  retry?: ReplayRetry;
}

export interface ReplayRetry {
  /** Sends after the first, at most. */
  attempts: number;
  /** The longest one wait lasts, whatever `Retry-After` asks. Default 30 000. */
  maxWaitMs?: number;
}

/** Answers that mean "not now": the same notification may be processed if sent again later. */
const RETRY_LATER = new Set([0, 408, 409, 425, 429, 500, 502, 503, 504]);
const DEFAULT_MAX_RETRY_WAIT_MS = 30_000;

export interface ReplayResult {
  /** The notification id, when it has one. */
  id: string | undefined;
  /** Where the notification was read: `file:line` or `[index]`. */
  origin: string;
  /** The HTTP status of the answer; 0 when none arrived. */
  status: number;
  /** The `{ processed, message }` answer; absent when the body was not one. */
  answer?: Answer;
  /** Why no answer arrived (connection refused, timeout). */
  error?: string;
  /** How many times it was sent, when `retry` sent it more than once. */
  attempts?: number;
}

/** An answer, with the wait its `Retry-After` asks for. */
type Sent = Omit<ReplayResult, "id" | "origin" | "attempts"> & { retryAfterMs?: number };
type Send = (body: string, headers: Record<string, string>) => Promise<Sent>;

interface Connection {
  send: Send;
  close(): Promise<void>;
}

/**
 * Send every notification of `source` to `target`, as the platform would, and collect each answer in
 * source order. Recorded headers are sent again (signature headers are never recorded: pass `sign`).
 */
export async function replay(
  target: ReplayTarget,
  source: ReplaySource,
  options: ReplayOptions = {},
): Promise<ReplayResult[]> {
  return replayEntries(target, await readSource(source), options);
}

/** `replay` for entries already read with `readSource`, keeping where each was read. */
export async function replayEntries(
  target: ReplayTarget,
  entries: readonly SourceEntry[],
  options: ReplayOptions = {},
): Promise<ReplayResult[]> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw optionError(
      new RangeError(`concurrency must be a positive integer, got ${concurrency}`),
      "MW_INVALID_OPTION",
      "concurrency",
    );
  checkRetry(options.retry);
  const connection = await connect(target, options);
  const results: ReplayResult[] = new Array(entries.length);
  let done = 0;
  try {
    await forEachLimited(entries, concurrency, async (entry, index) => {
      const result = await sendEntryOrSay(connection.send, entry, options);
      results[index] = result;
      options.onResult?.(result, ++done, entries.length);
    });
  } finally {
    await connection.close();
  }
  return results;
}

/**
 * Deeper than this an entry is not sent: serialising it would exhaust the stack (a corrupt line of
 * 200,000 nested arrays), and no receiver takes it (a notification nests about 8 levels, this
 * package's receiver at most `MAX_BODY_DEPTH`, 64).
 */
const MAX_REPLAY_DEPTH = 1_000;

/**
 * `sendEntry`, with whatever stops one entry (nested too deep, a signer that throws) its own result,
 * `status` 0 and the reason: one bad line never keeps the entries after it from being sent.
 */
async function sendEntryOrSay(send: Send, entry: SourceEntry, options: ReplayOptions): Promise<ReplayResult> {
  const notSent = (why: string): ReplayResult => ({
    id: idOf(entry),
    origin: entry.origin,
    status: 0,
    error: `not sent: ${why}`,
  });
  if (nestsDeeperThan(entry.notification, MAX_REPLAY_DEPTH))
    return notSent(`nested deeper than ${MAX_REPLAY_DEPTH} levels (a notification nests about 8)`);
  try {
    return await sendEntry(send, entry, options);
  } catch (err) {
    return notSent(err instanceof Error ? err.message : String(err));
  }
}

/**
 * Whether `value` nests objects and arrays deeper than `max` levels, walked with a stack, never
 * recursion. A value built in memory may share a branch (one address object used twice), which is
 * no reason to refuse it: branches are walked as often as they appear, up to a bound on the walk.
 */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ node: unknown; level: number }> = [{ node: value, level: 1 }];
  for (let walked = 0; stack.length > 0 && walked < 1_000_000; walked++) {
    const { node, level } = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (level > max) return true;
    for (const child of Object.values(node)) stack.push({ node: child, level: level + 1 });
  }
  return false;
}

function idOf(entry: SourceEntry): string | undefined {
  const notification = entry.notification as { id?: unknown } | null;
  return typeof notification?.id === "string" ? notification.id : undefined;
}

async function sendEntry(send: Send, entry: SourceEntry, options: ReplayOptions): Promise<ReplayResult> {
  const body = JSON.stringify(entry.notification);
  const id = idOf(entry);
  const retries = options.retry?.attempts ?? 0;
  const maxWaitMs = options.retry?.maxWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    // Lower-cased throughout: the same header in two spellings would be sent joined, "a, b".
    const headers: Record<string, string> = {
      "content-type": "application/json",
      ...replayableHeaders(entry.headers),
      ...lowerCased(options.headers),
    };
    // Signed again on every attempt: a Standard Webhooks signature carries its time.
    if (options.sign) Object.assign(headers, lowerCased(await options.sign(body)));
    const { retryAfterMs, ...sent } = await send(body, headers);
    const processed = sent.answer?.processed === true && sent.status >= 200 && sent.status < 300;
    if (processed || attempt > retries || !RETRY_LATER.has(sent.status))
      return { id, origin: entry.origin, ...sent, ...(attempt > 1 ? { attempts: attempt } : {}) };
    await sleep(Math.min(retryAfterMs ?? 1_000 * 2 ** (attempt - 1), maxWaitMs));
  }
}

function checkRetry(retry: ReplayRetry | undefined): void {
  if (retry === undefined) return;
  if (!Number.isInteger(retry.attempts) || retry.attempts < 0)
    throw optionError(
      new RangeError(`retry.attempts must be a whole number, 0 or more, got ${retry.attempts}`),
      "MW_INVALID_OPTION",
      "retry.attempts",
    );
  const maxWaitMs = retry.maxWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
  if (typeof maxWaitMs !== "number" || Number.isNaN(maxWaitMs) || maxWaitMs < 0)
    throw optionError(
      new RangeError(`retry.maxWaitMs must be a number of milliseconds, 0 or more, got ${maxWaitMs}`),
      "MW_INVALID_TIMEOUT",
      "retry.maxWaitMs",
    );
}

/** `Retry-After` as milliseconds from now: a number of seconds or an HTTP date. */
function retryAfterMs(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1_000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Headers about the original connection, which would be wrong (or refused) on a new one. */
const CONNECTION_HEADERS = new Set([
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "expect",
  "upgrade",
  "te",
]);

function replayableHeaders(recorded: Record<string, string> | undefined): Record<string, string> {
  const out = lowerCased(recorded);
  for (const name of CONNECTION_HEADERS) delete out[name];
  return out;
}

function lowerCased(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}

async function connect(target: ReplayTarget, options: ReplayOptions): Promise<Connection> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (typeof target === "string" || target instanceof URL)
    return { send: httpSender(String(target), timeoutMs), close: async () => {} };
  if (target instanceof Server) return serve(target, options.path ?? "/", timeoutMs);
  if (typeof target === "function")
    return serve(createServer(target as RequestListenerLike), options.path ?? "/", timeoutMs);
  if (isReceiver(target)) return { send: inProcessSender(target), close: async () => {} };
  // Quiet unless asked: a test run should show test output, not a log line per notification.
  const receiver = createReceiver({ logger: pino({ level: "silent" }), ...target });
  return { send: inProcessSender(receiver), close: () => receiver.close() };
}

const isReceiver = (target: object): target is Receiver =>
  typeof (target as Receiver).handle === "function" && typeof (target as Receiver).reject === "function";

const encoder = new TextEncoder();

function inProcessSender(receiver: Receiver): Send {
  return async (body, headers) => {
    const response = await receiver.handle({ method: "POST", headers, rawBody: encoder.encode(body) });
    const wait = retryAfterMs(response.headers["retry-after"]);
    return { status: response.status, answer: response.answer, ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
  };
}

function httpSender(url: string, timeoutMs: number): Send {
  return async (body, headers) => {
    let response: Response;
    let text: string;
    try {
      // A redirect is reported, not followed: following would turn the POST into a GET elsewhere.
      response = await fetch(url, {
        method: "POST",
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      // An endpoint that streams gigabytes back must not take the replaying process's memory with it.
      text = await readAnswer(response);
    } catch (err) {
      return { status: 0, error: describeFailure(err) };
    }
    const answer = answerIn(text);
    const wait = retryAfterMs(response.headers.get("retry-after"));
    return {
      status: response.status,
      ...(answer ? { answer } : {}),
      ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    };
  };
}

function describeFailure(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ""}`;
  return (err as Error).message ?? String(err);
}

function answerIn(text: string): Answer | undefined {
  try {
    const value = JSON.parse(text) as Partial<Answer> | null;
    if (value && typeof value.processed === "boolean")
      return { processed: value.processed, message: String(value.message ?? "") };
  } catch {
    // Not JSON: an answer from something other than the receiver (a proxy's error page, a 404).
  }
  return undefined;
}

/** Send to a server on loopback, listening on an ephemeral port for the replay if it is not already. */
async function serve(server: Server, path: string, timeoutMs: number): Promise<Connection> {
  const started = !server.listening;
  if (started) {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  }
  const url = new URL(path, `http://${loopbackHost(server.address())}`).toString();
  return {
    send: httpSender(url, timeoutMs),
    async close() {
      if (!started) return;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** Where to reach a listening server from this process. */
function loopbackHost(address: AddressInfo | string | null): string {
  if (address === null || typeof address === "string")
    throw coded(new TypeError("replay needs a server listening on a TCP port"), "MW_INVALID_ARGUMENT");
  const { address: host, port } = address;
  if (host === "0.0.0.0" || host === "::") return `127.0.0.1:${port}`;
  return address.family === "IPv6" ? `[${host}]:${port}` : `${host}:${port}`;
}

async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  run: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await run(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
