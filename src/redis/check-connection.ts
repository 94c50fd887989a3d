import { coded } from "../shared/errors.js";

/**
 * Start-up checks on a Redis connection option. ioredis reads an empty or missing URL as "localhost"
 * (`REDIS_URL=""` quietly connects to 127.0.0.1:6379) and fails on `undefined` with a TypeError about
 * `.on`, so each entry point refuses them first, saying what it was given and what it expects.
 */

const EXAMPLE = '"redis://127.0.0.1:6379" (or rediss:// for TLS)';

/** What an entry point accepts besides a URL: a client, and (for some) ioredis options. */
export interface ConnectionShape {
  /** The entry point, e.g. `redisStore`. */
  what: string;
  /** Its connection option's name. Default `connection`. */
  option?: string;
  /** A plain object of ioredis options is accepted too. */
  options?: boolean;
}

/** Throw a TypeError naming the problem and the fix if `value` cannot be a Redis connection. */
export function checkRedisConnection(value: unknown, given: ConnectionShape): void {
  const option = given.option ?? "connection";
  if (value === undefined || value === null) {
    throw coded(
      new TypeError(
        `${given.what}: \`${option}\` is required, and none was given (${value}); expected a Redis URL such as ${EXAMPLE}, an ioredis client or cluster, or ioredis options. Is REDIS_URL set?`,
      ),
      "MW_CONNECTION_MISSING",
    );
  }
  const shape = { ...given, what: `${given.what}({ ${option} })` };
  const expected = `a Redis URL such as ${EXAMPLE}, an ioredis client or cluster${shape.options ? ", or ioredis options ({ host, port })" : ""}`;
  if (value === undefined || value === null) {
    throw coded(
      new TypeError(`${shape.what}: no Redis connection was given (${value}); expected ${expected}. Is REDIS_URL set?`),
      "MW_CONNECTION_MISSING",
    );
  }
  if (typeof value === "string") {
    const problem = urlProblem(value);
    if (problem) throw coded(new TypeError(`${shape.what}: ${problem}; expected ${expected}`), "MW_CONNECTION_INVALID");
    return;
  }
  if (typeof value !== "object") {
    throw coded(
      new TypeError(`${shape.what}: a ${typeof value} is not a Redis connection; expected ${expected}`),
      "MW_CONNECTION_INVALID",
    );
  }
  if (isClientLike(value)) return;
  if (Array.isArray(value)) {
    if (value.length > 0) return; // Redis Cluster start-up nodes
    throw coded(
      new TypeError(`${shape.what}: an empty list of cluster nodes; expected ${expected}`),
      "MW_CONNECTION_INVALID",
    );
  }
  if (!shape.options) {
    throw coded(
      new TypeError(
        `${shape.what}: the object given is not an ioredis client (no on() and status); expected ${expected}`,
      ),
      "MW_CONNECTION_INVALID",
    );
  }
  // ioredis reads options without an address as 127.0.0.1:6379, as it does an empty URL.
  if (!["host", "port", "path", "sentinels"].some((key) => key in value)) {
    throw coded(
      new TypeError(
        `${shape.what}: ioredis options without host, port, path or sentinels would connect to 127.0.0.1:6379 in silence; expected ${expected}`,
      ),
      "MW_CONNECTION_INVALID",
    );
  }
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
