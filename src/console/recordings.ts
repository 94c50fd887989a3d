import type { Awaitable } from "../idempotency/store.js";
import type { NotificationRecorder, RecordedNotification } from "../logging/recorder.js";
import { optionError } from "../shared/errors.js";
import { rejectUnknownKeys } from "../shared/option-keys.js";

/** Where the console reads a notification's recorded request and answer back (`createAdmin`'s `recorder`). */
export interface RecordingSource {
  /** The newest recording of the notification `id`, if any is kept. */
  find(id: string): Awaitable<RecordedNotification | undefined>;
  /**
   * What a list row shows of it (event type, subscription), without reading the recording: a list
   * asks this once per row. Without it, a list row reads the recording with `find`.
   */
  summary?(id: string): Awaitable<RecordingSummary | undefined>;
}

/** What a list row shows of a recording. */
export interface RecordingSummary {
  eventType?: string;
  subscriptionId?: string;
}

export interface MemoryRecordings extends NotificationRecorder, RecordingSource {
  readonly size: number;
}

/**
 * A recorder that keeps the latest `max` recordings in memory (default 10,000), for the receiver's
 * `record` option and the console's `recorder` at once. Recordings are redacted as every recorder's
 * are; they are gone when the process ends.
 */
export function memoryRecordings(options: { max?: number } = {}): MemoryRecordings {
  rejectUnknownKeys("memoryRecordings", options, ["max"]);
  const max = options.max ?? 10_000;
  if (!Number.isInteger(max) || max < 1)
    throw optionError(
      new RangeError(`memoryRecordings: max must be a whole number, 1 or more; got ${max}`),
      "MW_INVALID_OPTION",
      "max",
    );
  const byId = new Map<string, RecordedNotification>();
  return {
    get size() {
      return byId.size;
    },
    write(entry) {
      const id = String(entry.notification.id ?? "");
      byId.delete(id);
      byId.set(id, entry);
      // A Map iterates in insertion order: the first key is the oldest recording.
      if (byId.size > max) byId.delete(byId.keys().next().value!);
    },
    find: (id) => byId.get(id),
    summary(id) {
      const notification = byId.get(id)?.notification as Record<string, any> | undefined;
      if (!notification) return undefined;
      return {
        ...(typeof notification.event_type === "string" ? { eventType: notification.event_type } : {}),
        ...(typeof notification.resource?.id === "string" ? { subscriptionId: notification.resource.id } : {}),
      };
    },
  };
}
