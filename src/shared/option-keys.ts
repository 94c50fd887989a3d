import { optionError } from "./errors.js";
/**
 * Start-up checks on an options object. In JavaScript a misspelt key (`store:` for `idempotency:`,
 * `onRenewal` for `onRenew`) is silently ignored and the default used instead, which is found out
 * only in production; refusing it at construction, with the likely intended name, costs nothing.
 */

/** The option names an entry point accepts, listed as a record so the compiler checks it against the type. */
export type KnownKeys<T> = Record<keyof T, true>;

/**
 * Throw a TypeError for each key of `options` that `known` does not list, naming the nearest known
 * key ("did you mean") and the full list. `what` is the entry point, e.g. `"redisStore"`.
 */
export function rejectUnknownKeys(what: string, options: unknown, known: Iterable<string>): void {
  if (options === null || typeof options !== "object") return;
  const names = [...known];
  const accepted = new Set(names);
  for (const key of Object.keys(options)) {
    if (accepted.has(key)) continue;
    const near = nearest(key, names);
    const hint = near ? ` Did you mean "${near}"?` : "";
    // A misspelt handler would leave its events to onUnknown, or acknowledged unhandled: where the
    // options take handlers, an `on...` key is reported as one (MW_UNKNOWN_HANDLER, docs/errors.md).
    const handler = /^on[A-Z]/.test(key) && names.some((name) => /^on[A-Z]/.test(name));
    throw optionError(
      new TypeError(
        `${what}: unknown ${handler ? "handler" : "option"} "${key}".${hint} Accepted options: ${[...names].sort().join(", ")}.`,
      ),
      handler ? "MW_UNKNOWN_HANDLER" : "MW_UNKNOWN_OPTION",
      key,
    );
  }
}

/** The known name closest to `key`, if it is close enough to be a slip rather than another word. */
export function nearest(key: string, names: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const distance = name.toLowerCase() === lower ? 0 : levenshtein(lower, name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  // A third of the longer word's letters, at least 2: "onRenewal" → "onRenew" (2), "timeout" → "timeoutMs" (2).
  const allowed = best === undefined ? 0 : Math.max(2, Math.floor(Math.max(key.length, best.length) / 3));
  if (best !== undefined && bestDistance <= allowed) return best;
  return SYNONYMS[key]?.find((synonym) => names.includes(synonym));
}

/** Words users reach for that are not near the real name in spelling. */
const SYNONYMS: Record<string, readonly string[]> = {
  store: ["idempotency"],
  idempotencyStore: ["idempotency"],
  secret: ["verify"],
  redis: ["connection"],
  client: ["connection", "redis"],
  url: ["connection", "redis", "baseUrl"],
  redisUrl: ["connection", "redis"],
  timeout: ["timeoutMs", "handlerTimeoutMs"],
  recordings: ["recorder", "record"],
};

/** Edit distance (insertions, deletions, substitutions), two rows at a time. */
export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
