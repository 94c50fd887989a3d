/**
 * Deepest nesting of objects and arrays accepted in a body (the top-level object is level 1). A
 * notification nests about eight levels; the limit leaves room for merchants' metadata while keeping
 * every recursive walk over a payload (redaction, recording, the fingerprint's digest, the parse's
 * own check) far from the stack's limit.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * Whether an already parsed value nests deeper than `max`. Walked with an explicit stack, never
 * recursion. A value met twice (a cycle, or a shared branch) cannot have come from JSON and is refused
 * too, which also keeps the walk linear.
 */
export function valueNestsDeeperThan(value: unknown, max: number): boolean {
  const seen = new WeakSet<object>();
  const stack: Array<{ value: object; depth: number }> = [];
  if (value !== null && typeof value === "object") stack.push({ value, depth: 1 });
  while (stack.length > 0) {
    const { value: node, depth } = stack.pop()!;
    if (depth > max || seen.has(node)) return true;
    seen.add(node);
    for (const child of Object.values(node)) {
      if (child !== null && typeof child === "object") stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

export const TOO_DEEP_MESSAGE = `body is nested deeper than ${MAX_BODY_DEPTH} levels`;

const utf8 = new TextDecoder("utf-8", { fatal: true });

export type ParsedBody = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

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
 * The check every parsed body needs before anything else sees it: drops its polluting keys and tells
 * whether it nests deeper than `MAX_BODY_DEPTH`, in one walk per member that turns back past the limit.
 * The receiver's intake leaves it to the payload digest's walk where that walk can vouch for the body
 * (`Fingerprinter.within`: no such key, not too deep), so most bodies are walked once.
 */
export const dropKeysOrTooDeep = (value: Record<string, unknown>): boolean =>
  nestsDeeperOrDropKeys(value, 1, MAX_BODY_DEPTH, true);

/** `parseJsonText`, then `dropKeysOrTooDeep`. */
export function parseJsonObject(bytes: Uint8Array): ParsedBody {
  const parsed = parseJsonText(bytes);
  if (parsed.ok && dropKeysOrTooDeep(parsed.value)) return { ok: false, message: TOO_DEEP_MESSAGE };
  return parsed;
}

/**
 * Decode strictly as UTF-8 and parse as JSON; only an object is a notification. `JSON.parse` is
 * native and iterative, safe at any nesting; what comes after it (the fingerprint's walk, redaction,
 * recording) recurses, so nothing deeper than `MAX_BODY_DEPTH` is accepted, and nothing else may see
 * the value before `dropKeysOrTooDeep` (or the digest's walk, which vouches for the same) has. (A
 * reviver did the cleaning before, at a third of parse time, and a loop over every character the
 * depth; then scans of the text for the polluting keys, which cost 0.8 µs per KB, more than the walk.)
 */
export function parseJsonText(bytes: Uint8Array): ParsedBody {
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
  return { ok: true, value: value as Record<string, unknown> };
}
