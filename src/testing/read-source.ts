import { readdir, readFile, stat } from "node:fs/promises";
import { extname, join } from "node:path";
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

export class SourceError extends Error {
  override readonly name = "SourceError";
  constructor(
    readonly origin: string,
    detail: string,
  ) {
    super(`${origin}: ${detail}`);
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

/** Every entry of `source`, with the parts that are not JSON reported in place rather than thrown. */
export async function readSourceItems(source: ReplaySource): Promise<SourceItem[]> {
  if (typeof source !== "string") return source.map((value, index) => entryOf(value, `[${index}]`));
  const info = await stat(source);
  if (!info.isDirectory()) return readFileItems(source);
  const names = (await readdir(source)).filter((name) => isSourceFile(name)).sort();
  const items: SourceItem[] = [];
  for (const name of names) items.push(...(await readFileItems(join(source, name))));
  return items;
}

const isSourceFile = (name: string) => name.endsWith(".json") || name.endsWith(".jsonl");

async function readFileItems(path: string): Promise<SourceItem[]> {
  const text = await readFile(path, "utf8");
  return extname(path) === ".jsonl" ? jsonLinesItems(path, text) : jsonFileItems(path, text);
}

function jsonLinesItems(path: string, text: string): SourceItem[] {
  const items: SourceItem[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const origin = `${path}:${i + 1}`;
    try {
      items.push(entryOf(JSON.parse(line), origin));
    } catch {
      items.push({ origin, error: invalidJson(line).error });
    }
  }
  return items;
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
