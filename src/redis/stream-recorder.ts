import type { NotificationRecorder, RecordedNotification } from "../logging/recorder.js";
import { optionError } from "../shared/errors.js";
import { type KnownKeys, rejectUnknownKeys } from "../shared/option-keys.js";
import { checkRedisConnection } from "./check-connection.js";
import { type ConnectionOption, closeIfOwned, connect, RECORDER_DEFAULTS, type RedisConnection } from "./connect.js";

/** `connection` beside each function's own settings. */
type Connected<T> = T & { connection?: unknown };
const RECORDER_KEYS = {
  connection: true,
  stream: true,
  maxLen: true,
} as const satisfies KnownKeys<Connected<RedisStreamRecorderSettings>>;
const READ_KEYS = {
  connection: true,
  stream: true,
  start: true,
  end: true,
  count: true,
} as const satisfies KnownKeys<Connected<ReadRedisStreamSettings>>;

function checkStream(what: string, stream: unknown): void {
  if (typeof stream !== "string" || stream === "")
    throw optionError(
      new TypeError(
        `${what}: stream must be the stream's key, e.g. "merchant-webhooks:recording"; got ${JSON.stringify(stream)}`,
      ),
      "MW_INVALID_OPTION",
      "stream",
    );
}

/** `connection`: where the stream lives. */
export type RedisStreamRecorderOptions = RedisStreamRecorderSettings & ConnectionOption;

export interface RedisStreamRecorderSettings {
  /** The stream key, e.g. `merchant-webhooks:recording`. */
  stream: string;
  /** Entries kept, trimmed approximately (`MAXLEN ~`) so trimming stays cheap. Default 10,000. */
  maxLen?: number;
}

export interface RedisStreamRecorder extends NotificationRecorder {
  /** Closes the connection when it was made from a URL. */
  close(): Promise<void>;
}

export const DEFAULT_STREAM_MAX_LEN = 10_000;

/** The field of each stream entry that holds the recorded notification as JSON. */
export const ENTRY_FIELD = "entry";

/** Record each notification as an entry of a Redis stream (`XADD`), trimmed to about `maxLen` entries. */
export function redisStreamRecorder(options: RedisStreamRecorderOptions): RedisStreamRecorder {
  rejectUnknownKeys("redisStreamRecorder", options, Object.keys(RECORDER_KEYS));
  checkRedisConnection(options?.connection, {
    what: "redisStreamRecorder",
    options: true,
  });
  checkStream("redisStreamRecorder", options.stream);
  const maxLen = options.maxLen ?? DEFAULT_STREAM_MAX_LEN;
  if (!Number.isInteger(maxLen) || maxLen < 1)
    throw optionError(
      new RangeError(`maxLen must be a positive integer, got ${maxLen}`),
      "MW_INVALID_OPTION",
      "maxLen",
    );
  const connection = connectTo(options.connection);
  return {
    async write(entry: RecordedNotification) {
      const client = connection.client;
      await client.xadd(options.stream, "MAXLEN", "~", maxLen, "*", ENTRY_FIELD, JSON.stringify(entry));
    },
    close: () => connection.close(),
  };
}

/** `connection`: where the stream lives. */
export type ReadRedisStreamOptions = ReadRedisStreamSettings & ConnectionOption;

export interface ReadRedisStreamSettings {
  stream: string;
  /** First entry id to read (inclusive). Default `-`, the oldest. */
  start?: string;
  /** Last entry id to read (inclusive). Default `+`, the newest. */
  end?: string;
  /** Read at most this many entries. Default: all. */
  count?: number;
}

const PAGE_SIZE = 500;

/** The recorded entries of a stream, oldest first: a replay source as it is. */
export async function readRedisStream(options: ReadRedisStreamOptions): Promise<RecordedNotification[]> {
  rejectUnknownKeys("readRedisStream", options, Object.keys(READ_KEYS));
  checkRedisConnection(options?.connection, {
    what: "readRedisStream",
    options: true,
  });
  checkStream("readRedisStream", options.stream);
  const connection = connectTo(options.connection);
  try {
    const client = connection.client;
    const limit = options.count ?? Number.POSITIVE_INFINITY;
    const entries: RecordedNotification[] = [];
    let start = options.start ?? "-";
    while (entries.length < limit) {
      const page = await client.xrange(
        options.stream,
        start,
        options.end ?? "+",
        "COUNT",
        Math.min(PAGE_SIZE, limit - entries.length),
      );
      for (const [, fields] of page) {
        const json = fieldValue(fields, ENTRY_FIELD);
        if (json !== undefined) entries.push(JSON.parse(json) as RecordedNotification);
      }
      if (page.length === 0 || page.length < PAGE_SIZE) break;
      start = `(${page[page.length - 1]![0]}`;
    }
    return entries;
  } finally {
    await connection.close();
  }
}

/** XRANGE gives each entry's fields as a flat name, value, name, value list. */
function fieldValue(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** A URL, options or nodes are connected (with `RECORDER_DEFAULTS`) and closed here; a lent client is left to its owner. */
function connectTo(connection: RedisConnection) {
  const handle = connect(connection, { defaults: RECORDER_DEFAULTS });
  return { client: handle.client, close: () => closeIfOwned(handle) };
}
