import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Awaitable } from "../idempotency/store.js";
import type { NotificationRecorder, RecordedNotification } from "../logging/recorder.js";
import { optionError } from "../shared/errors.js";
import { rejectUnknownKeys } from "../shared/option-keys.js";

/** Where the console reads a notification's recorded request and answer back (`createAdmin`'s `recorder`). */
export interface RecordingSource {
  /** The newest recording of the notification `id`, if any is kept. */
  find(id: string): Awaitable<RecordedNotification | undefined>;
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
  };
}

/**
 * The recordings a `jsonlRecorder` wrote into `dir`, searched newest day first. Each lookup reads the
 * files, so it suits the console's one-notification views, not a listing.
 */
export function jsonlRecordings(options: { dir: string }): RecordingSource {
  rejectUnknownKeys("jsonlRecordings", options, ["dir"]);
  const { dir } = options;
  if (typeof dir !== "string" || dir === "")
    throw optionError(
      new TypeError(`jsonlRecordings: dir must be the recorder's directory; got ${JSON.stringify(dir)}`),
      "MW_INVALID_OPTION",
      "dir",
    );
  return {
    find(id) {
      let files: string[];
      try {
        files = readdirSync(dir).filter((name) => /^notifications-\d{4}-\d{2}-\d{2}\.jsonl$/.test(name));
      } catch {
        return undefined;
      }
      // Each line holds the id as a JSON string: a cheap text test first, then the parsed check.
      const needle = JSON.stringify(id);
      for (const file of files.sort().reverse()) {
        const lines = readFileSync(join(dir, file), "utf8").split("\n");
        for (let i = lines.length - 1; i >= 0; i--) {
          const line = lines[i]!;
          if (!line.includes(needle)) continue;
          try {
            const entry = JSON.parse(line) as RecordedNotification;
            if (entry.notification?.id === id) return entry;
          } catch {}
        }
      }
      return undefined;
    },
  };
}
