import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { MerchantWebhooksError } from "../shared/errors.js";
import { jsonSyntaxError, lineAndColumn } from "./json-syntax-error.js";

/** One notification to send, with the headers it was recorded with when it comes from a recording. */
export interface SourceEntry {
  /** The parsed notification, not yet validated: a replay also exercises the receiver's rejections. */
  notification: unknown;
  headers?: Record<string, string>;
  /** Where it was read: `file:line`, or `[index]` in an array. */
  origin: string;
}

/** A part of a source that could not be read as JSON. */
export interface SourceProblem {
  origin: string;
  error: string;
}

export type SourceItem = SourceEntry | SourceProblem;

/**
 * Notifications, or recorded entries (`{ notification, headers }`, as the recorders write them), in an
 * array; or the path of a `.json` file (one notification or an array), a `.jsonl` file (one per line),
 * or a directory of such files, read in name order (so daily recordings replay oldest first).
 */
export type ReplaySource = readonly unknown[] | string;

export class SourceError extends MerchantWebhooksError {
  override readonly name = "SourceError";
  constructor(
    readonly origin: string,
    detail: string,
  ) {
    super("MW_REPLAY_SOURCE", `${origin}: ${detail}`);
  }
}

export const isSourceProblem = (item: SourceItem): item is SourceProblem => "error" in item;

/** Every entry of `source`; throws a `SourceError` naming the file and line of the first unreadable part. */
export async function readSource(source: ReplaySource): Promise<SourceEntry[]> {
  const items = await readSourceItems(source);
  const problem = items.find(isSourceProblem);
  if (problem) throw new SourceError(problem.origin, problem.error);
  return items as SourceEntry[];
}

/**
 * A `.jsonl` line longer than this is reported rather than read: a notification is a few KB and a
 * receiver takes 256 KB by default, while a corrupt file may hold one line of gigabytes.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/**
 * A `.json` file is parsed whole, which takes several times its size in memory; past this size it is
 * reported rather than read. `.jsonl` files are read a line at a time, so have no such limit.
 */
export const MAX_JSON_FILE_BYTES = 64 * 1024 * 1024;

/** Every entry of `source`, with the parts that are not JSON reported in place rather than thrown. */
export async function readSourceItems(source: ReplaySource): Promise<SourceItem[]> {
  const items: SourceItem[] = [];
  for await (const item of sourceItems(source)) items.push(item);
  return items;
}

/**
 * `readSourceItems` one item at a time, for a caller that need not keep them all (validate): a
 * `.jsonl` file is read line by line, so its size does not matter, only each line's.
 */
export async function* sourceItems(source: ReplaySource): AsyncGenerator<SourceItem> {
  if (typeof source !== "string") {
    for (const [index, value] of source.entries()) yield entryOf(value, `[${index}]`);
    return;
  }
  const info = await stat(source);
  if (!info.isDirectory()) {
    yield* fileItems(source, info.size);
    return;
  }
  const names = (await readdir(source)).filter((name) => isSourceFile(name)).sort();
  for (const name of names) {
    const path = join(source, name);
    yield* fileItems(path, (await stat(path)).size);
  }
}

const isSourceFile = (name: string) => name.endsWith(".json") || name.endsWith(".jsonl");

async function* fileItems(path: string, size: number): AsyncGenerator<SourceItem> {
  if (extname(path) === ".jsonl") {
    yield* jsonLinesItems(path);
    return;
  }
  if (size > MAX_JSON_FILE_BYTES) {
    yield {
      origin: `${path}:1`,
      error: `not read: ${megabytes(size)}, more than the ${megabytes(MAX_JSON_FILE_BYTES)} a .json file may have; split it, or write it as .jsonl (one notification per line)`,
    };
    return;
  }
  yield* jsonFileItems(path, await readFile(path, "utf8"));
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** One item per non-blank line, reading the file in chunks; a line past `MAX_LINE_BYTES` is skipped, not held. */
async function* jsonLinesItems(path: string): AsyncGenerator<SourceItem> {
  let parts: Buffer[] = [];
  let lineBytes = 0;
  let lineNumber = 1;
  function* lineDone(): Generator<SourceItem> {
    const origin = `${path}:${lineNumber++}`;
    const bytes = lineBytes;
    const kept = parts;
    parts = [];
    lineBytes = 0;
    if (bytes > MAX_LINE_BYTES) {
      yield { origin, error: `not read: the line is ${megabytes(bytes)}, more than ${megabytes(MAX_LINE_BYTES)}` };
      return;
    }
    const line = Buffer.concat(kept).toString("utf8").trim();
    if (line === "") return;
    try {
      yield entryOf(JSON.parse(line), origin);
    } catch {
      yield { origin, error: invalidJson(line).error };
    }
  }
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(10); ; end = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, end < 0 ? chunk.length : end);
      lineBytes += piece.length;
      if (lineBytes <= MAX_LINE_BYTES) parts.push(piece);
      else parts = []; // too long: only its length is kept, for the report
      if (end < 0) break;
      yield* lineDone();
      start = end + 1;
    }
  }
  if (lineBytes > 0) yield* lineDone();
}

function jsonFileItems(path: string, text: string): SourceItem[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const { line, error } = invalidJson(text);
    return [{ origin: `${path}:${line}`, error }];
  }
  if (!Array.isArray(value)) return [entryOf(value, `${path}:${lineAndColumn(text, text.search(/\S/)).line}`)];
  const lines = elementLines(text);
  return value.map((item, index) => entryOf(item, `${path}:${lines[index] ?? 1}`));
}

/** The line of the first syntax error, and "invalid JSON: unexpected '}', expected a value (column 9)". */
function invalidJson(text: string): { line: number; error: string } {
  const syntax = jsonSyntaxError(text);
  const { line, column } = lineAndColumn(text, syntax?.offset ?? 0);
  return { line, error: `invalid JSON: ${syntax?.message ?? "not parseable"} (column ${column})` };
}

/** A recorded entry is unwrapped to its notification and headers; anything else is a notification. */
function entryOf(value: unknown, origin: string): SourceEntry {
  if (isObject(value) && isObject(value.notification) && !("resource" in value)) {
    const headers = isObject(value.headers) ? stringValues(value.headers) : undefined;
    return headers
      ? { notification: value.notification, headers, origin }
      : { notification: value.notification, origin };
  }
  return { notification: value, origin };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function stringValues(record: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(record)) if (typeof value === "string") out[name] = value;
  return out;
}

/**
 * The line each element of a top-level JSON array starts on, so errors can point into a file a person
 * edits. Only called on text that parsed, so the scan need not handle malformed input.
 */
function elementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let awaiting = false;
  for (const char of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === "\n") {
      line++;
      continue;
    }
    if (char === " " || char === "\t" || char === "\r") continue;
    if (depth === 1 && awaiting && char !== "]") {
      lines.push(line);
      awaiting = false;
    }
    if (char === '"') inString = true;
    else if (char === "[" || char === "{") {
      depth++;
      if (depth === 1) awaiting = true;
    } else if (char === "]" || char === "}") depth--;
    else if (char === "," && depth === 1) awaiting = true;
  }
  return lines;
}
