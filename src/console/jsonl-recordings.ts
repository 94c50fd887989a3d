import { createReadStream } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { RecordedNotification } from "../logging/recorder.js";
import { optionError } from "../shared/errors.js";
import { rejectUnknownKeys } from "../shared/option-keys.js";
import type { RecordingSource, RecordingSummary } from "./recordings.js";

const DAY_FILE = /^notifications-\d{4}-\d{2}-\d{2}\.jsonl$/;
/** A listing asks for many rows at once: the index is brought up to date at most this often for it. */
const LIST_REFRESH_MS = 1_000;

/** Where a notification's newest recording sits, and what a list row shows of it. */
interface Entry extends RecordingSummary {
  file: string;
  offset: number;
  length: number;
}

/**
 * The recordings a `jsonlRecorder` wrote into `dir`, found through an index: each file is read once,
 * streamed and asynchronously (never a whole file in one synchronous block, so the process receiving
 * webhooks keeps answering), then only what was appended since. A list row is answered from the index
 * alone; a notification's page reads its one line, at its offset. The index holds an id, a position
 * and two short strings per recorded notification.
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
  const index = new Map<string, Entry>();
  /** Bytes of each file indexed so far (up to its last complete line). */
  const indexed = new Map<string, number>();
  let refreshing: Promise<void> | undefined;
  let refreshedAt = 0;

  async function refresh(): Promise<void> {
    let files: string[];
    try {
      files = (await readdir(dir)).filter((name) => DAY_FILE.test(name)).sort();
    } catch {
      index.clear();
      indexed.clear();
      return;
    }
    const sizes = await Promise.all(
      files.map((file) =>
        stat(join(dir, file)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    // A file removed or cut short: start again, so no entry points into a file that changed under it.
    const shrunk = files.some((file, i) => (indexed.get(file) ?? 0) > sizes[i]!);
    if (shrunk || [...indexed.keys()].some((file) => !files.includes(file))) {
      index.clear();
      indexed.clear();
    }
    // Oldest day first, so a newer recording of an id replaces an older one.
    for (const [i, file] of files.entries()) {
      const from = indexed.get(file) ?? 0;
      if (sizes[i]! > from) indexed.set(file, await indexFile(file, from, sizes[i]!));
    }
  }

  /** Indexes the complete lines of `file` in `[from, to)`; returns where the indexed part ends. */
  async function indexFile(file: string, from: number, to: number): Promise<number> {
    let offset = from;
    let pending = Buffer.alloc(0);
    for await (const chunk of createReadStream(join(dir, file), { start: from, end: to - 1 })) {
      let data = pending.length > 0 ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
      let newline = data.indexOf(10);
      while (newline >= 0) {
        indexLine(file, offset, data.subarray(0, newline));
        offset += newline + 1;
        data = data.subarray(newline + 1);
        newline = data.indexOf(10);
      }
      pending = Buffer.from(data);
    }
    return offset;
  }

  function indexLine(file: string, offset: number, line: Buffer): void {
    if (line.length === 0) return;
    try {
      const entry = JSON.parse(line.toString("utf8")) as RecordedNotification;
      const notification = entry?.notification as Record<string, any> | undefined;
      if (typeof notification?.id !== "string") return;
      const summary: Entry = { file, offset, length: line.length };
      if (typeof notification.event_type === "string") summary.eventType = notification.event_type;
      if (typeof notification.resource?.id === "string") summary.subscriptionId = notification.resource.id;
      index.set(notification.id, summary);
    } catch {
      // A line cut short by a crash, or not a recording: nothing to find there.
    }
  }

  /** Brings the index up to date; callers at the same time share one pass. With `recent`, a pass younger than that will do. */
  function upToDate(recent = 0): Promise<void> {
    if (refreshing) return refreshing;
    if (recent > 0 && Date.now() - refreshedAt < recent) return Promise.resolve();
    refreshing = refresh().finally(() => {
      refreshedAt = Date.now();
      refreshing = undefined;
    });
    return refreshing;
  }

  async function readEntry(entry: Entry): Promise<RecordedNotification | undefined> {
    const handle = await open(join(dir, entry.file), "r");
    try {
      const buffer = Buffer.alloc(entry.length);
      await handle.read(buffer, 0, entry.length, entry.offset);
      return JSON.parse(buffer.toString("utf8")) as RecordedNotification;
    } catch {
      return undefined;
    } finally {
      await handle.close();
    }
  }

  return {
    async find(id) {
      await upToDate();
      const entry = index.get(id);
      return entry ? readEntry(entry) : undefined;
    },
    async summary(id) {
      await upToDate(LIST_REFRESH_MS);
      const entry = index.get(id);
      if (!entry) return undefined;
      const { eventType, subscriptionId } = entry;
      return {
        ...(eventType !== undefined ? { eventType } : {}),
        ...(subscriptionId !== undefined ? { subscriptionId } : {}),
      };
    },
  };
}
