/**
 * The same JSON value in other bytes: keys in reverse order and indented. A platform that builds the
 * body again for a retry sends this kind of difference, which a receiver must treat as the same payload.
 */
export function reserialize(value: unknown): string {
  return JSON.stringify(reversedKeys(value), null, 2);
}

function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) out[key] = reversedKeys((value as Record<string, unknown>)[key]);
  return out;
}
