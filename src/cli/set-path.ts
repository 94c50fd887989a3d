import { coded } from "../shared/errors.js";
import { assertSafeKey } from "../testing/deep-merge.js";

/** `resource.purchase_units[0].amount` -> ["resource", "purchase_units", 0, "amount"]. */
export function parsePath(path: string): (string | number)[] {
  const parts: (string | number)[] = [];
  for (const segment of path.split(".")) {
    const match = /^([^[\]]*)((?:\[\d+\])*)$/.exec(segment);
    if (!match || (match[1] === "" && match[2] === ""))
      throw coded(new TypeError(`"${path}" is not a field path`), "MW_INVALID_ARGUMENT");
    if (match[1] !== "") parts.push(match[1]!);
    for (const index of match[2]!.matchAll(/\[(\d+)\]/g)) parts.push(Number(index[1]));
  }
  for (const part of parts) if (typeof part === "string") assertSafeKey(part);
  return parts;
}

/**
 * The value `text` stands for at `current`'s place. JSON is parsed (numbers, booleans, null, objects),
 * except where the field holds a string now: amounts, phases and ids are strings in the interface, and
 * `--set ...amount.value=5.00` should not turn one into a number the schema rejects.
 */
export function valueFor(text: string, current: unknown): unknown {
  if (typeof current === "string" && !text.startsWith('"')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Set `path=value` in `target`, creating the objects and arrays on the way. */
export function setPath(target: Record<string, unknown>, assignment: string): void {
  const eq = assignment.indexOf("=");
  if (eq <= 0) throw coded(new TypeError(`"${assignment}" is not path=value`), "MW_INVALID_ARGUMENT");
  const parts = parsePath(assignment.slice(0, eq));
  let node: Record<string | number, unknown> = target;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]!;
    const next = node[part];
    if (next === null || typeof next !== "object") node[part] = typeof parts[i + 1] === "number" ? [] : {};
    node = node[part] as Record<string | number, unknown>;
  }
  const last = parts[parts.length - 1]!;
  node[last] = valueFor(assignment.slice(eq + 1), node[last]);
}
