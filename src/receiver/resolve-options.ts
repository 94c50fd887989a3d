import type { Logger } from "pino";
import { type FailureStatus, retryAfter } from "../answer/answer.js";
import { checkHandlingOptions } from "../dispatch/check-handling-options.js";
import { type HandlerSlots, handlerSlots } from "../dispatch/handler-slots.js";
import { memoryStore } from "../idempotency/memory-store.js";
import { DEFAULT_LEASE_MS, type IdempotencyStore } from "../idempotency/store.js";
import { defaultLogger, handlerLogger, libraryLogger } from "../logging/logger.js";
import { type Ordering, resolveOrdering } from "../ordering/ordering-options.js";
import { checkReceiverOptions } from "./check-receiver-options.js";
import { DEFAULT_VERIFY_TIMEOUT_MS } from "./check-signature.js";
import { type Fingerprinter, payloadFingerprinter } from "./fingerprint.js";
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HANDLER_TIMEOUT_MS,
  type ReceiverOptions,
} from "./options.js";

/** A receiver's options with every default filled in, checked once at start-up. */
export interface ResolvedOptions {
  options: ReceiverOptions;
  store: IdempotencyStore;
  logger: Logger;
  /** Base for `ctx.log`. */
  ctxLogger: Logger;
  failureStatus: FailureStatus;
  bodyLimit: number;
  bodyTimeoutMs: number;
  timeoutMs: number;
  verifyTimeoutMs: number;
  leaseMs: number;
  /** `Retry-After` for 503 answers. */
  unavailableRetry: Record<string, string>;
  /** Load shedding: the in-flight count and its limit, and handler slots with `backpressure.concurrency`. */
  slots: HandlerSlots;
  /** `ordering` resolved; undefined when off. */
  ordering: Ordering | undefined;
  /** The payload fingerprint under `fingerprintKey`. */
  fingerprint: Fingerprinter;
}

export function resolveOptions(options: ReceiverOptions): ResolvedOptions {
  checkReceiverOptions(options);
  const store = options.idempotency ?? memoryStore();
  const leaseMs = options.leaseMs ?? store.leaseMs ?? DEFAULT_LEASE_MS;
  checkHandlingOptions(options, store, leaseMs);
  const logger = libraryLogger(options.logger ?? defaultLogger(), options.redact ?? {});
  return {
    options,
    store,
    logger,
    ctxLogger: handlerLogger(logger, options.redact ?? {}),
    failureStatus: options.failureStatus ?? "semantic",
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    timeoutMs: options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS,
    verifyTimeoutMs: options.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS,
    leaseMs,
    unavailableRetry: retryAfter((options.retryAfterSeconds ?? 5) * 1000),
    slots: handlerSlots(options.backpressure),
    ordering: resolveOrdering(options.ordering, options.onStale),
    fingerprint: payloadFingerprinter(options.fingerprintKey),
  };
}
