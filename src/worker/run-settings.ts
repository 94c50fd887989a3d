import { setMaxListeners } from "node:events";
import type { Logger } from "pino";
import type { Handler, HandlerHooks, SubscriptionHandlers } from "../dispatch/handlers.js";
import type { PlatformOption } from "../dispatch/platform-handle.js";
import { ownerTokens } from "../dispatch/run-claimed.js";
import { DEFAULT_LEASE_MS, type IdempotencyStore } from "../idempotency/store.js";
import { handlerLogger } from "../logging/logger.js";
import type { RedactOptions } from "../logging/redact.js";
import type { KnownKeys } from "../shared/option-keys.js";
import { type EncryptionKey, type SealingKey, sealingKeys } from "./seal.js";

/** Queued handlers are the slow ones, and no sender is waiting on them: a longer limit than a receiver's. */
export const DEFAULT_WORKER_HANDLER_TIMEOUT_MS = 60_000;

/** The options every worker takes, whichever queue it works. */
export interface RunOptions extends SubscriptionHandlers, HandlerHooks, PlatformOption {
  onStale?: Handler;
  logger?: Logger;
  redact?: RedactOptions;
  handlerTimeoutMs?: number;
  leaseMs?: number;
  encryptionKey?: EncryptionKey | readonly EncryptionKey[];
}

/** `RunOptions`' names besides the handlers: each worker lists them among the keys it accepts. */
export const RUN_OPTION_KEYS = {
  onStale: true,
  logger: true,
  redact: true,
  handlerTimeoutMs: true,
  platform: true,
  leaseMs: true,
  encryptionKey: true,
} as const satisfies KnownKeys<Omit<RunOptions, keyof SubscriptionHandlers | keyof HandlerHooks>>;

/** What every run of a job needs, whichever queue the job came from. */
export interface RunSettings {
  store: IdempotencyStore;
  handlers: SubscriptionHandlers & HandlerHooks;
  /** For notifications claimed in order that are stale by the time they run. */
  onStale?: Handler | undefined;
  leaseMs: number;
  timeoutMs: number;
  /** Base for `ctx.log`, with the worker's redaction (see `handlerLogger`). */
  ctxLogger: Logger;
  /** `ctx.platform`, when the worker was given a platform client. */
  platform?: unknown;
  /** A token unique to each run, for the job `scope`: complete/fail/extend succeed only while it owns the record. */
  nextOwner: (scope: string) => string;
  /** Aborted when the worker gives up waiting for running handlers on close. */
  shutdown: AbortSignal;
  /** Keys that open sealed job data. */
  keys: readonly SealingKey[];
  /** The worker's logger, with `redact` applied. */
  logger: Logger;
  redact: RedactOptions;
}

/** The run settings of a worker on `store`, and the controller of their `shutdown` signal (see `closeWorker`). */
export function runSettings(
  options: RunOptions,
  store: IdempotencyStore,
  logger: Logger,
): { settings: RunSettings; shutdown: AbortController } {
  const redact = options.redact ?? {};
  const shutdown = new AbortController();
  // One listener per running job waits on it: as many as the worker's concurrency.
  setMaxListeners(0, shutdown.signal);
  const settings: RunSettings = {
    store,
    handlers: options,
    onStale: options.onStale,
    leaseMs: options.leaseMs ?? store.leaseMs ?? DEFAULT_LEASE_MS,
    timeoutMs: options.handlerTimeoutMs ?? DEFAULT_WORKER_HANDLER_TIMEOUT_MS,
    ctxLogger: handlerLogger(logger, redact),
    platform: options.platform,
    nextOwner: ownerTokens(),
    shutdown: shutdown.signal,
    keys: sealingKeys(options.encryptionKey),
    logger,
    redact,
  };
  return { settings, shutdown };
}
