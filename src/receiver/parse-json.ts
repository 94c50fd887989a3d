import { MAX_BODY_DEPTH, TOO_DEEP_MESSAGE, textNestsDeeperThan } from "./nesting-depth.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

export type ParsedBody = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Keys that reach an object's prototype machinery when a parsed payload is later merged or copied
 * (`Object.assign`, spread into a class, zod copying unknown keys). `JSON.parse` itself creates them
 * as plain own properties; this drops them before anything else sees the payload.
 */
function dropPollutingKeys(key: string, value: unknown): unknown {
  if (key === "__proto__") return undefined;
  if (key === "constructor" && value !== null && typeof value === "object" && "prototype" in value) return undefined;
  return value;
}

/**
 * Decode strictly as UTF-8 and parse as JSON; only an object is a notification. Nesting is checked on
 * the text first, so nothing deeper than `MAX_BODY_DEPTH` is ever parsed (the reviver recurses, and
 * overflowed at about 4,000 levels). The reviver costs a third of parse time, so it runs only when the
 * text could hold a dangerous key, including one spelled with `\u` escapes.
 */
export function parseJsonObject(bytes: Uint8Array): ParsedBody {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, message: "body is not valid UTF-8" };
  }
  if (textNestsDeeperThan(text, MAX_BODY_DEPTH)) return { ok: false, message: TOO_DEEP_MESSAGE };
  let value: unknown;
  try {
    const risky = text.includes("__proto__") || text.includes("constructor") || text.includes("\\u");
    value = risky ? JSON.parse(text, dropPollutingKeys) : JSON.parse(text);
  } catch {
    return { ok: false, message: "body is not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, message: "body must be a JSON object" };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
