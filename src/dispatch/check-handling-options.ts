import { optionError } from "../shared/errors.js";
import { ALL_HANDLER_KEYS } from "./handlers.js";

/** The options receivers and workers share, as far as start-up checks go. */
export interface HandlingOptions {
  handlerTimeoutMs?: number;
  leaseMs?: number;
}

const KNOWN_HANDLERS = new Set<string>([...ALL_HANDLER_KEYS, "onStale"]);

/**
 * Refuse at start-up what would otherwise fail quietly per notification: a misspelt handler (`onRenewal`
 * would send every renewal to `onUnknown`, or acknowledge it unhandled), and limits that make no sense.
 */
export function checkHandlingOptions(
  options: object & HandlingOptions,
  store: { extend?: unknown },
  leaseMs: number,
): void {
  for (const key of Object.keys(options)) {
    if (
      /^on[A-Z]/.test(key) &&
      !KNOWN_HANDLERS.has(key) &&
      typeof (options as Record<string, unknown>)[key] === "function"
    ) {
      throw optionError(
        new TypeError(`unknown handler "${key}": handlers are ${[...KNOWN_HANDLERS].join(", ")}`),
        "MW_UNKNOWN_HANDLER",
        key,
      );
    }
  }
  timerMs("handlerTimeoutMs", options.handlerTimeoutMs);
  if (!(Number.isFinite(leaseMs) && leaseMs > 0))
    throw optionError(
      new RangeError(`leaseMs must be a positive number of ms, got ${leaseMs}`),
      "MW_INVALID_TIMEOUT",
      "leaseMs",
    );
  const timeoutMs = options.handlerTimeoutMs;
  // A handler outliving its lease is safe only while the claim is renewed; without `extend` a redelivery
  // would take the claim over and run the handler a second time.
  if (typeof store.extend !== "function" && (timeoutMs === 0 || (timeoutMs !== undefined && timeoutMs > leaseMs))) {
    throw optionError(
      new RangeError(
        `handlerTimeoutMs (${timeoutMs}) exceeds leaseMs (${leaseMs}) and the store cannot renew a claim (no extend)`,
      ),
      "MW_INVALID_TIMEOUT",
      "handlerTimeoutMs",
    );
  }
}

/** Longest delay `setTimeout` honours: Node turns anything longer into 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A clear error for a limit that is negative or not a number; `code` says whether it is a time limit. */
export function nonNegative(
  name: string,
  value: number | undefined,
  code: "MW_INVALID_OPTION" | "MW_INVALID_TIMEOUT" = "MW_INVALID_OPTION",
): void {
  if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
    throw optionError(new RangeError(`${name} must be a number of 0 or more, got ${value}`), code, name);
  }
}

/** `nonNegative`, for a time in ms that ends up in a timer: at most `MAX_TIMER_MS` (about 24.8 days). */
export function timerMs(name: string, value: number | undefined): void {
  nonNegative(name, value, "MW_INVALID_TIMEOUT");
  if (value !== undefined && value > MAX_TIMER_MS) {
    throw optionError(
      new RangeError(
        `${name} must be at most ${MAX_TIMER_MS} ms (about 24.8 days), got ${value}: a longer timer fires at once in Node`,
      ),
      "MW_INVALID_TIMEOUT",
      name,
    );
  }
}
