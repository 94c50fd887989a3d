import { readFileSync } from "node:fs";
import { expect } from "vitest";
import type { z } from "zod";

// Shared by the schema tests: the renewal fixture, a way to change one field of it, and assertions
// that name the exact issue path, so a rule that fails for the wrong reason does not count.

const renewal: unknown = JSON.parse(readFileSync(new URL("../fixtures/renewal.json", import.meta.url), "utf8"));

export type Path = (string | number)[];

/** A fresh copy of the renewal fixture, free to mutate. */
export function fixture(): Record<string, any> {
  return structuredClone(renewal) as Record<string, any>;
}

/** `target` with the value at `path` replaced (created along the way), or removed when `value` is undefined. */
export function withValue<T extends Record<string, any>>(target: T, path: Path, value: unknown): T {
  let node: any = target;
  for (const [index, key] of path.slice(0, -1).entries()) {
    node[key] ??= typeof path[index + 1] === "number" ? [] : {};
    node = node[key];
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return target;
}

/** Parses and asserts success, showing the issues if there are any; returns the output. */
export function expectValid<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  expect(result.error?.issues ?? []).toEqual([]);
  return result.data as z.output<S>;
}

/** Parses and asserts failure with an issue reported exactly at `path`. */
export function expectInvalidAt(schema: z.ZodType, value: unknown, path: Path): void {
  const result = schema.safeParse(value);
  expect(result.success).toBe(false);
  expect(result.error!.issues.map((issue) => issue.path)).toContainEqual(path);
}
