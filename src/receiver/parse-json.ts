import { MAX_BODY_DEPTH, TOO_DEEP_MESSAGE } from "./nesting-depth.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

export type ParsedBody = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Fewer opening brackets than the limit cannot nest past it: two native scans settle most bodies. */
function hasFewBrackets(text: string, max: number): boolean {
  let opens = 0;
  for (let i = text.indexOf("{"); i >= 0 && opens <= max; i = text.indexOf("{", i + 1)) opens++;
  for (let i = text.indexOf("["); i >= 0 && opens <= max; i = text.indexOf("[", i + 1)) opens++;
  return opens <= max;
}

/**
 * Keys that reach an object's prototype machinery when a parsed payload is later merged or copied
 * (`Object.assign`, spread into a class, zod copying unknown keys). `JSON.parse` itself creates them
 * as plain own properties; they are dropped before anything else sees the payload.
 */
const pollutes = (key: string, value: unknown) =>
  key === "__proto__" || (key === "constructor" && value !== null && typeof value === "object" && "prototype" in value);

/**
 * Walks what `JSON.parse` made (plain data, no cycles, own keys only) and answers whether it nests
 * deeper than `max`, dropping polluting keys on the way when `dropKeys`. The walk turns back at
 * `max + 1`, so the stack stays shallow at any nesting, and costs per member, not per character.
 */
function nestsDeeperOrDropKeys(value: object, depth: number, max: number, dropKeys: boolean): boolean {
  if (depth > max) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (item !== null && typeof item === "object" && nestsDeeperOrDropKeys(item, depth + 1, max, dropKeys))
        return true;
    }
    return false;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const item = object[key];
    if (dropKeys && pollutes(key, item)) delete object[key];
    else if (item !== null && typeof item === "object" && nestsDeeperOrDropKeys(item, depth + 1, max, dropKeys))
      return true;
  }
  return false;
}

/**
 * Decode strictly as UTF-8 and parse as JSON; only an object is a notification. `JSON.parse` is
 * native and iterative, safe at any nesting; what comes after it (the fingerprint's walk, redaction,
 * recording) recurses, so nothing deeper than `MAX_BODY_DEPTH` is accepted. A body with fewer opening
 * brackets than that cannot be deeper, which two native scans tell; only a body with more is walked,
 * per member, and a body that could hold a dangerous key (including one spelled with `\u` escapes)
 * is cleaned in the same walk. (A reviver did the cleaning before, at a third of parse time, and a
 * loop over every character the depth.)
 */
export function parseJsonObject(bytes: Uint8Array): ParsedBody {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, message: "body is not valid UTF-8" };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: "body is not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, message: "body must be a JSON object" };
  }
  const deep = !hasFewBrackets(text, MAX_BODY_DEPTH);
  const risky = text.includes("__proto__") || text.includes("constructor") || text.includes("\\u");
  if ((deep || risky) && nestsDeeperOrDropKeys(value, 1, deep ? MAX_BODY_DEPTH : Number.POSITIVE_INFINITY, risky))
    return { ok: false, message: TOO_DEEP_MESSAGE };
  return { ok: true, value: value as Record<string, unknown> };
}
