/**
 * The canonical text of a parsed JSON value: every object's keys in sorted order, no whitespace,
 * strings and numbers as `JSON.stringify` writes them. Two bodies that hold the same JSON value
 * (whatever their key order, spacing or escapes) have the same canonical text, so a sender that
 * re-serialises a retry is still sending the same payload.
 *
 * The native serializer does the writing; the replacer only hands it a key-sorted copy of an object
 * whose keys are out of order, so an already-sorted payload costs one pass of comparisons. (Keys that
 * are array indices come first in a JS object whatever the order: still one order per set of keys.)
 * Nesting is bounded before this runs: the receiver refuses bodies deeper than its depth limit.
 */
export function canonicalJson(value: unknown): string {
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
      for (const key of keys) Object.defineProperty(sorted, key, { value: (value as Record<string, unknown>)[key], enumerable: true });
      return sorted;
    }
  }
  return value;
}
