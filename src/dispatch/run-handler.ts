import type { SubscriptionNotification } from "../schema/index.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import type { Handler, HandlerContext } from "./handlers.js";

export class HandlerTimeoutError extends MerchantWebhooksError {
  override name = "HandlerTimeoutError";
  constructor(ms: number) {
    super("MW_HANDLER_TIMEOUT", `handler did not finish within ${ms} ms`);
  }
}

export class LeaseLostError extends MerchantWebhooksError {
  override name = "LeaseLostError";
  constructor() {
    super("MW_LEASE_LOST", "the claim on this notification was lost to another process");
  }
}

export interface RunLimits {
  timeoutMs: number;
  leaseMs: number;
  /** Pushes the claim's lease forward; false when another process took the claim. */
  extendLease: () => Promise<boolean>;
}

/**
 * Run one handler under a time limit. A handler that returns without a promise is done there and
 * then, before any timer could have fired, so it costs no timer and no race. For one that returns a
 * promise, the limit counts from the call. The `AbortController` is made only when the handler reads
 * `ctx.signal` (or the run is stopped), and the lease gets a heartbeat only when the handler may
 * outlive it: with the defaults (10 s limit, 30 s lease) one timer is all an asynchronous handler costs.
 */
export async function runHandler(
  handler: Handler,
  notification: SubscriptionNotification,
  contextFor: (signal: () => AbortSignal) => HandlerContext,
  limits: RunLimits,
): Promise<void> {
  let controller: AbortController | undefined;
  const signal = () => (controller ??= new AbortController()).signal;
  const started = performance.now();
  const result = handler(notification, contextFor(signal));
  if (!isPromiseLike(result)) return;

  let rejectRun: (error: Error) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    rejectRun = reject;
  });
  const stop = (error: Error) => {
    (controller ??= new AbortController()).abort(error);
    rejectRun(error);
  };

  const left = Math.max(0, limits.timeoutMs - (performance.now() - started));
  const timer =
    limits.timeoutMs > 0 ? setTimeout(() => stop(new HandlerTimeoutError(limits.timeoutMs)), left) : undefined;
  const needsHeartbeat = limits.timeoutMs === 0 || limits.timeoutMs > limits.leaseMs / 2;
  const heartbeat = needsHeartbeat
    ? setInterval(
        () => {
          limits.extendLease().then(
            (held) => held || stop(new LeaseLostError()),
            () => {}, // the store is unreachable: keep running; the lease may still hold
          );
        },
        Math.max(1, Math.floor(limits.leaseMs / 3)),
      )
    : undefined;
  heartbeat?.unref?.();

  try {
    await Promise.race([result, stopped]);
  } finally {
    clearTimeout(timer);
    clearInterval(heartbeat);
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === "object" && typeof (value as PromiseLike<unknown>).then === "function";
}
