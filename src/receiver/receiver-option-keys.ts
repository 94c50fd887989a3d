import { ALL_HANDLER_KEYS, type HandlerHooks, type SubscriptionHandlers } from "../dispatch/handlers.js";
import type { KnownKeys } from "../lifecycle/option-keys.js";
import type { ReceiverOptions } from "./options.js";

/** Every option `createReceiver` (and so every adapter) takes; the compiler keeps it in step with the type. */
const NON_HANDLER_KEYS = {
  idempotency: true,
  logger: true,
  verify: true,
  authorizeSender: true,
  fingerprintKey: true,
  verifyTimeoutMs: true,
  explainSignatureFailures: true,
  queue: true,
  bodyLimit: true,
  bodyTimeoutMs: true,
  handlerTimeoutMs: true,
  failureStatus: true,
  leaseMs: true,
  retryAfterSeconds: true,
  redact: true,
  backpressure: true,
  record: true,
  eventSchema: true,
  ordering: true,
  onStale: true,
} as const satisfies KnownKeys<Omit<ReceiverOptions, keyof SubscriptionHandlers | keyof HandlerHooks>>;

export const RECEIVER_OPTION_KEYS: readonly string[] = [...Object.keys(NON_HANDLER_KEYS), ...ALL_HANDLER_KEYS];
