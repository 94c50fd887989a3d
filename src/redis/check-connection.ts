/**
 * Start-up checks on a Redis connection option. ioredis reads an empty or missing URL as "localhost"
 * (`REDIS_URL=""` quietly connects to 127.0.0.1:6379) and fails on `undefined` with a TypeError about
 * `.on`, so each entry point refuses them first, saying what it was given and what it expects.
 */

const EXAMPLE = '"redis://127.0.0.1:6379" (or rediss:// for TLS)';

/** What an entry point accepts besides a URL: a client, and (for some) ioredis options. */
export interface ConnectionShape {
  /** The entry point and its option, e.g. `redisStore({ redis })`. */
  what: string;
  /** A plain object of ioredis options is accepted too. */
  options?: boolean;
}

/** Throw a TypeError naming the problem and the fix if `value` cannot be a Redis connection. */
export function checkRedisConnection(value: unknown, shape: ConnectionShape): void {
  const expected = `a Redis URL such as ${EXAMPLE}, an ioredis client or cluster${shape.options ? ", or ioredis options ({ host, port })" : ""}`;
  if (value === undefined || value === null) {
    throw new TypeError(
      `${shape.what}: no Redis connection was given (${value}); expected ${expected}. Is REDIS_URL set?`,
    );
  }
  if (typeof value === "string") {
    const problem = urlProblem(value);
    if (problem) throw new TypeError(`${shape.what}: ${problem}; expected ${expected}`);
    return;
  }
  if (typeof value !== "object") {
    throw new TypeError(`${shape.what}: a ${typeof value} is not a Redis connection; expected ${expected}`);
  }
  if (isClientLike(value) || shape.options) return;
  throw new TypeError(
    `${shape.what}: the object given is not an ioredis client (no on() and status); expected ${expected}`,
  );
}

const isClientLike = (value: object): boolean =>
  typeof (value as { on?: unknown }).on === "function" && typeof (value as { status?: unknown }).status === "string";

function urlProblem(url: string): string | undefined {
  if (url.trim() === "") return "the Redis URL is an empty string (is REDIS_URL set but empty?)";
  // A unix socket path is what ioredis takes besides a URL.
  if (url.startsWith("/")) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${shownUrl(url)}" is not a URL`;
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    return `"${shownUrl(url)}" has the scheme "${parsed.protocol}", not redis: or rediss:`;
  }
  if (!parsed.hostname) return `"${shownUrl(url)}" names no host`;
  return undefined;
}

/**
 * A URL as it may be shown in an error or a log: the password replaced, and cut. Anything between
 * "//" and "@" may hold a password, so when the text does not parse that part is hidden whole.
 */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "****";
    return parsed.toString().slice(0, 200);
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//****@").slice(0, 200);
  }
}
