import { Cluster, Redis, type RedisOptions } from "ioredis";
import { UsageError } from "./args.js";

/** Where the CLI finds Redis: one server, or a cluster's startup nodes. */
export interface RedisTarget {
  cluster: boolean;
  urls: URL[];
}

/**
 * `--redis` values (each may hold several URLs separated by commas), else `$REDIS_URL`, else the
 * local default. Several URLs, or `--cluster`, mean a Redis Cluster reached through those nodes.
 */
export function redisTarget(values: readonly string[] | undefined, cluster: boolean): RedisTarget {
  const given = values && values.length > 0 ? values : [process.env.REDIS_URL || "redis://127.0.0.1:6379"];
  const urls = given
    .flatMap((value) => value.split(","))
    .map((text) => text.trim())
    .filter((text) => text !== "")
    .map((text) => {
      const url = URL.canParse(text) ? new URL(text) : undefined;
      if (!url || (url.protocol !== "redis:" && url.protocol !== "rediss:"))
        throw new UsageError(`--redis must be a redis:// or rediss:// URL, got ${redacted(text)}`);
      return url;
    });
  if (urls.length === 0) throw new UsageError("--redis is empty");
  return { cluster: cluster || urls.length > 1, urls };
}

/** A URL as it may be printed: without its password. */
export function redacted(text: string): string {
  if (!URL.canParse(text)) return text.replace(/\/\/[^@/]*@/, "//***@");
  const url = new URL(text);
  if (url.password) url.password = "***";
  return url.toString();
}

/** Fail fast: a CLI run should say Redis is unreachable within seconds, not wait on reconnections. */
const CLI_REDIS: RedisOptions = { connectTimeout: 2_000, commandTimeout: 10_000, maxRetriesPerRequest: 1 };

function nodeOptions(url: URL): RedisOptions {
  return {
    ...CLI_REDIS,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === "rediss:" ? { tls: {} } : {}),
  };
}

/** The client for `target`; the caller closes it. */
export function connectTarget(target: RedisTarget): Redis | Cluster {
  const first = target.urls[0]!;
  if (!target.cluster) return new Redis(first.toString(), CLI_REDIS);
  const client = new Cluster(
    target.urls.map((url) => ({ host: url.hostname, port: Number(url.port || 6379) })),
    {
      redisOptions: nodeOptions(first),
      // Give up after a few rounds rather than retrying forever against nodes that are not there.
      clusterRetryStrategy: (times) => (times > 3 ? null : 200 * times),
    },
  );
  return client;
}

/** "redis://127.0.0.1:6379" or "cluster redis://a:1, redis://b:2", passwords hidden. */
export function describeTarget(target: RedisTarget): string {
  const list = target.urls.map((url) => redacted(url.toString())).join(", ");
  return target.cluster ? `Redis Cluster at ${list}` : `Redis at ${list}`;
}
