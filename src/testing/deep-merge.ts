import { coded } from "../shared/errors.js";
/**
 * A partial of `T` at every depth. Arrays are replaced whole rather than merged element by element:
 * an override of `purchase_units` says what the list is, not how to patch it.
 */
export type DeepPartial<T> = T extends readonly unknown[]
  ? T
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> | undefined }
    : T;

/**
 * Keys that would reach `Object.prototype` (or a constructor's prototype) when assigned: overrides may
 * come from a command line or a file, so they are refused rather than silently merged.
 */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

export function assertSafeKey(key: string): void {
  if (FORBIDDEN_KEYS.has(key))
    throw coded(new TypeError(`refusing the key "${key}" in an override`), "MW_INVALID_ARGUMENT");
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * A copy of `base` with `overrides` merged in at every depth. A key set to `undefined` removes the
 * field, so a test can build a notification that lacks it. Neither argument is modified.
 */
export function deepMerge<T>(base: T, overrides: DeepPartial<T> | undefined): T {
  const out = structuredClone(base);
  if (overrides === undefined) return out;
  return mergeInto(out, overrides, 0) as T;
}

/** As deep as a receiver accepts a body (`MAX_BODY_DEPTH`): a deeper override could never be delivered. */
const MAX_DEPTH = 64;

function checkDepth(depth: number): void {
  if (depth > MAX_DEPTH)
    throw coded(new RangeError(`override nested deeper than ${MAX_DEPTH} levels`), "MW_INVALID_ARGUMENT");
}

/** Merge `override` into `target` (a private copy), returning the merged value. */
function mergeInto(target: unknown, override: unknown, depth: number): unknown {
  if (!isPlainObject(override)) return copyChecked(override, depth);
  if (!isPlainObject(target)) return copyChecked(override, depth);
  checkDepth(depth);
  for (const [key, value] of Object.entries(override)) {
    assertSafeKey(key);
    if (value === undefined) delete target[key];
    else target[key] = mergeInto(target[key], value, depth + 1);
  }
  return target;
}

/** A copy of an override value that replaces a field whole, with its keys checked at every depth. */
function copyChecked(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== "object") return value;
  checkDepth(depth);
  if (Array.isArray(value)) return value.map((item) => copyChecked(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    assertSafeKey(key);
    if (item !== undefined) out[key] = copyChecked(item, depth + 1);
  }
  return out;
}
