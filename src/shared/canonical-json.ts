/**
 * The canonical text of a parsed JSON value: every object's keys in sorted order, no whitespace,
 * strings and numbers as `JSON.stringify` writes them. Two bodies that hold the same JSON value
 * (whatever their key order, spacing or escapes) have the same canonical text, so a sender that
 * re-serialises a retry is still sending the same payload.
 *
 * The native serializer does the writing. A value made only of plain JSON data (what `JSON.parse`
 * returns) is first copied with its keys sorted, sharing every part already in order, and written
 * without a replacer: a replacer is called for every key and value and kept the serializer off its
 * fast path, at four times the cost. Anything else (a `toJSON`, `undefined`, a class instance, from a
 * body another middleware parsed) takes the replacer path, which writes the same text for plain data.
 * Nesting is bounded before this runs: the receiver refuses bodies deeper than its depth limit.
 */
export function canonicalJson(value: unknown): string {
  const sorted = sortedCopy(value);
  return sorted === NOT_PLAIN ? canonicalJsonByReplacer(value) : JSON.stringify(sorted);
}

/** The same text for any value JSON.stringify accepts, one replacer call per key and value. */
export function canonicalJsonByReplacer(value: unknown): string {
  return JSON.stringify(value, sortKeys);
}

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      const sorted: Record<string, unknown> = {};
      // defineProperty, not assignment: a `__proto__` key from the payload stays a plain key.
      for (const key of keys)
        Object.defineProperty(sorted, key, { value: (value as Record<string, unknown>)[key], enumerable: true });
      return sorted;
    }
  }
  return value;
}

const NOT_PLAIN = Symbol("not plain JSON data");

/** `value` with every object's keys in order (the same object where nothing changes), or NOT_PLAIN. */
function sortedCopy(value: unknown): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : NOT_PLAIN;
    case "object":
      if (value === null) return value;
      return Array.isArray(value) ? sortedArray(value) : sortedObject(value as Record<string, unknown>);
    default:
      return NOT_PLAIN;
  }
}

function sortedArray(array: unknown[]): unknown {
  if (typeof (array as { toJSON?: unknown }).toJSON === "function") return NOT_PLAIN;
  let copy: unknown[] | undefined;
  for (let i = 0; i < array.length; i++) {
    if (!(i in array)) return NOT_PLAIN;
    const item = array[i];
    const sorted = sortedCopy(item);
    if (sorted === NOT_PLAIN) return NOT_PLAIN;
    if (sorted !== item) (copy ??= array.slice())[i] = sorted;
  }
  return copy ?? array;
}

function sortedObject(object: Record<string, unknown>): unknown {
  const proto = Object.getPrototypeOf(object);
  if ((proto !== Object.prototype && proto !== null) || typeof object.toJSON === "function") return NOT_PLAIN;
  const keys = Object.keys(object);
  let inOrder = true;
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      inOrder = false;
      break;
    }
  }
  // Keys in order: the object itself, unless a member changes, when a copy is started at that member.
  let copy: Record<string, unknown> | undefined = inOrder ? undefined : {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = object[key];
    const sorted = sortedCopy(item);
    if (sorted === NOT_PLAIN) return NOT_PLAIN;
    if (copy === undefined) {
      if (sorted === item) continue;
      copy = {};
      for (let j = 0; j < i; j++) setKey(copy, keys[j]!, object[keys[j]!]);
    }
    setKey(copy, key, sorted);
  }
  return copy ?? object;
}

/** A `__proto__` key from the payload stays a plain key: assignment would set the prototype. */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
