/**
 * The same JSON value as `JSON.stringify(value)`, written the way another serializer would: every
 * object's keys in reverse order, spaced and broken over lines, and (with `escapeStrings`) each string
 * character as a `\u` escape. `variant` picks among a few layouts, so each retry can differ again.
 */
export function reserialise(value: unknown, variant = 1, escapeStrings = false): string {
  const gap = [" ", "  ", "\t", "\n  "][variant % 4]!;
  const write = (item: unknown): string => {
    if (item === null || typeof item !== "object") {
      if (typeof item === "string" && escapeStrings)
        return `"${[...item].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}"`;
      return JSON.stringify(item);
    }
    if (Array.isArray(item)) return `[${gap}${item.map(write).join(`,${gap}`)}${gap}]`;
    const keys = Object.keys(item);
    if (variant % 2 === 1) keys.reverse();
    else keys.push(keys.shift()!);
    return `{${gap}${keys.map((key) => `${JSON.stringify(key)}${gap}:${gap}${write((item as Record<string, unknown>)[key])}`).join(`,${gap}`)}${gap}}`;
  };
  return write(value);
}
