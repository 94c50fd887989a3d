import { nonNegative, timerMs } from "../dispatch/check-handling-options.js";
import { rejectUnknownKeys } from "../lifecycle/option-keys.js";
import { coded } from "../shared/errors.js";
import type { ReceiverOptions } from "./options.js";
import { RECEIVER_OPTION_KEYS } from "./receiver-option-keys.js";

/**
 * Bytes of the smallest body the notification schema accepts:
 * `{"id":"x","event_type":"","resource":{"execution_phase":"x"}}`. A `bodyLimit` below it
 * refuses every notification with 413, which is a unit slip (KiB for bytes), never a choice.
 */
export const SMALLEST_NOTIFICATION_BYTES = 61;

/**
 * The receiver's start-up checks beyond the handling options shared with workers: misspelt keys,
 * limits that would refuse everything or hold requests forever, and ordering that cannot order.
 */
export function checkReceiverOptions(options: ReceiverOptions, what = "createReceiver"): void {
  if (options === null || typeof options !== "object") {
    throw coded(
      new TypeError(`${what}: options must be an object of handlers and settings, got ${options}`),
      "MW_INVALID_OPTION",
    );
  }
  rejectUnknownKeys(what, options, RECEIVER_OPTION_KEYS);
  nonNegative("bodyLimit", options.bodyLimit);
  timerMs("bodyTimeoutMs", options.bodyTimeoutMs);
  nonNegative("retryAfterSeconds", options.retryAfterSeconds);
  if (options.bodyLimit !== undefined && options.bodyLimit < SMALLEST_NOTIFICATION_BYTES) {
    throw coded(
      new RangeError(
        `bodyLimit is ${options.bodyLimit} bytes, below the smallest valid notification (${SMALLEST_NOTIFICATION_BYTES} bytes), so every delivery would get 413. It is in bytes: for 256 KiB write 256 * 1024.`,
      ),
      "MW_INVALID_OPTION",
    );
  }
  if (options.verifyTimeoutMs !== undefined) {
    timerMs("verifyTimeoutMs", options.verifyTimeoutMs);
    if (options.verifyTimeoutMs === 0)
      throw coded(
        new RangeError("verifyTimeoutMs must be above 0: a signature check needs a time limit (default 5000)"),
        "MW_INVALID_TIMEOUT",
      );
  }
  if (options.handlerTimeoutMs === 0 && !options.queue) {
    throw coded(
      new RangeError(
        "handlerTimeoutMs is 0 (no limit), but without a queue the sender's request stays open as long as the handler runs. Give a limit in ms (default 10000), or run slow handlers from a queue (inProcessQueue, bullmqQueue).",
      ),
      "MW_INVALID_TIMEOUT",
    );
  }
  checkBackpressure(options.backpressure);
  const ordering = options.ordering;
  if (ordering && options.eventSchema && (ordering === true || ordering.position === undefined)) {
    throw coded(
      new TypeError(
        "ordering needs a way to read each event's position: the default reads resource.update_time of a subscription notification, which an eventSchema's events need not have. Give ordering: { key, position }, each a function of the event.",
      ),
      "MW_INVALID_OPTION",
    );
  }
}

function checkBackpressure(backpressure: ReceiverOptions["backpressure"]): void {
  if (backpressure === undefined) return;
  for (const key of ["maxInFlight", "concurrency", "maxPending"] as const) {
    nonNegative(`backpressure.${key}`, backpressure[key]);
  }
  // Zero would refuse every notification with 503: a slip, never a choice.
  for (const key of ["maxInFlight", "concurrency"] as const) {
    if (backpressure[key] === 0)
      throw coded(
        new RangeError(`backpressure.${key} must be at least 1: 0 sheds every notification`),
        "MW_INVALID_OPTION",
      );
  }
}
