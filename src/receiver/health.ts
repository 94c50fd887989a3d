import type { IdempotencyStore } from "../idempotency/store.js";
import type { NotificationQueue } from "../queue/queue.js";
import { withTimeout } from "../shared/time-limit.js";

/** `up` answered the ping; `down` failed it or missed the time-out; `unknown` has no ping; `none` is not configured. */
export type HealthState = "up" | "down" | "unknown" | "none";

/** `ok` is false when the store or the queue is down: every notification would be answered 503. */
export interface ReceiverHealth {
  ok: boolean;
  store: Exclude<HealthState, "none">;
  queue: HealthState;
}

export interface HealthOptions {
  /** Longest either ping may take before it counts as down. Default 500 ms. */
  timeoutMs?: number;
}

export const DEFAULT_HEALTH_TIMEOUT_MS = 500;

/**
 * Ping the store and the queue at once, each within the time-out, so a load balancer's health check
 * gets its answer well inside its own limit even when Redis hangs rather than refuses.
 */
export async function checkHealth(
  store: IdempotencyStore,
  queue: NotificationQueue | undefined,
  options: HealthOptions = {},
): Promise<ReceiverHealth> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS;
  const [storeState, queueState] = await Promise.all([
    store.ping ? stateOf(() => store.ping!(), timeoutMs) : ("unknown" as const),
    !queue ? ("none" as const) : queue.ping ? stateOf(() => queue.ping!(), timeoutMs) : ("unknown" as const),
  ]);
  return { ok: storeState !== "down" && queueState !== "down", store: storeState, queue: queueState };
}

/** `up` when `ping` resolves within `timeoutMs`; `down` when it rejects, throws or is late. */
async function stateOf(ping: () => unknown, timeoutMs: number): Promise<"up" | "down"> {
  const answered = Promise.resolve().then(ping);
  return withTimeout(answered, timeoutMs, () => new Error("ping late")).then(
    () => "up" as const,
    () => "down" as const,
  );
}
