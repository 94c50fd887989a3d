import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { coded, optionError } from "../shared/errors.js";
import { rejectUnknownKeys } from "../shared/option-keys.js";
import type { NotificationRecorder, RecordedNotification } from "./recorder.js";

export interface JsonlRecorderOptions {
  /** Directory of the recordings; created if missing. One file per UTC day: `notifications-YYYY-MM-DD.jsonl`. */
  dir: string;
}

export interface JsonlRecorder extends NotificationRecorder {
  /** The directory it writes to: `createAdmin`'s `recorder` reads the recordings back from it. */
  readonly dir: string;
  /** Flushes what was written and closes the file. */
  close(): Promise<void>;
}

/**
 * Record each notification as one JSON line, appended to the file of the UTC day it was received.
 * The files hold personal data (redacted by default, but ids and amounts remain), so they are created
 * readable by the owner only.
 */
export function jsonlRecorder(options: JsonlRecorderOptions): JsonlRecorder {
  rejectUnknownKeys("jsonlRecorder", options, ["dir"] satisfies (keyof JsonlRecorderOptions)[]);
  const dir = options.dir;
  if (typeof dir !== "string" || dir === "")
    throw optionError(
      new TypeError(`jsonlRecorder: dir must be the directory for the recordings; got ${JSON.stringify(dir)}`),
      "MW_INVALID_OPTION",
      "dir",
    );
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let current: { day: string; stream: WriteStream } | undefined;
  let closed = false;
  const ending = new Set<Promise<void>>();

  function end(stream: WriteStream): Promise<void> {
    const done = new Promise<void>((resolve) => stream.end(() => resolve()));
    ending.add(done);
    return done.finally(() => ending.delete(done));
  }

  function streamFor(day: string): WriteStream {
    if (current?.day === day) return current.stream;
    if (current) void end(current.stream);
    const stream = createWriteStream(join(dir, `notifications-${day}.jsonl`), { flags: "a", mode: 0o600 });
    const opened = { day, stream };
    // The failing write's callback reports the error; the next write opens the file again.
    stream.on("error", () => {
      if (current === opened) current = undefined;
    });
    current = opened;
    return stream;
  }

  return {
    dir,
    write(entry: RecordedNotification): Promise<void> {
      if (closed) return Promise.reject(coded(new Error("jsonl recorder is closed"), "MW_RECORDER_CLOSED"));
      const stream = streamFor(utcDay(entry.received_at));
      return new Promise((resolve, reject) => {
        stream.write(`${JSON.stringify(entry)}\n`, (err) => (err ? reject(err) : resolve()));
      });
    },
    async close() {
      closed = true;
      if (current) void end(current.stream);
      current = undefined;
      await Promise.all([...ending]);
    },
  };
}

/** `YYYY-MM-DD` of an ISO receive time, or of now when the entry carries none that reads as one. */
function utcDay(receivedAt: string): string {
  return /^\d{4}-\d{2}-\d{2}T/.test(receivedAt) ? receivedAt.slice(0, 10) : new Date().toISOString().slice(0, 10);
}
