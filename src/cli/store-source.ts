import type { IdempotencyStore } from "../idempotency/store.js";

type RedisClient = import("ioredis").Redis | import("ioredis").Cluster;

/** The options naming the idempotency store a command reads or acts on (`inspect`, `redrive --in-process`). */
export const STORE_OPTIONS = {
  redis: { type: "string", short: "r", multiple: true },
  cluster: { type: "boolean" },
  "store-prefix": { type: "string" },
  postgres: { type: "string" },
  schema: { type: "string" },
  table: { type: "string" },
} as const;

/** What those options gave. */
export interface StoreValues {
  redis?: string[] | undefined;
  cluster?: boolean | undefined;
  "store-prefix"?: string | undefined;
  postgres?: string | undefined;
  schema?: string | undefined;
  table?: string | undefined;
}

/**
 * The store a command's options name, and the connections it opens, each loading its own peer only
 * when asked for: pg for `--postgres` (postgresStore), else ioredis (redisStore). The Redis client is
 * shared with whatever else the command reads there (inspect's BullMQ queue). `close` ends them all.
 */
export function storeSource(values: StoreValues) {
  const closers: Array<() => Promise<unknown>> = [];
  const places: string[] = [];
  let redis: Promise<RedisClient> | undefined;

  /** A connection the command opened: closed by `close`, its place named by `where`. */
  const opened = (close: () => Promise<unknown>, place?: string) => {
    closers.push(close);
    if (place) places.push(place);
  };

  const redisClient = () =>
    (redis ??= (async () => {
      const { connectTarget, describeTarget, redisTarget } = await import("./redis-target.js");
      const { closeClient } = await import("../redis/connect.js");
      const target = redisTarget(values.redis, values.cluster === true);
      const client = connectTarget(target);
      client.on("error", () => {}); // failures reach the calls made on it, and are reported once there
      opened(() => closeClient(client), describeTarget(target));
      return client;
    })());

  return {
    redisClient,
    opened,
    async store(): Promise<IdempotencyStore> {
      if (values.postgres) {
        const { Pool } = (await import("pg")).default;
        const pool = new Pool({ connectionString: values.postgres, max: 2 });
        const { describeDatabase } = await import("./pg-boss-connection.js");
        opened(() => pool.end(), describeDatabase(values.postgres));
        const { postgresStore } = await import("../postgres/postgres-store.js");
        return postgresStore({
          connection: pool,
          ...(values.schema ? { schema: values.schema } : {}),
          ...(values.table ? { table: values.table } : {}),
        });
      }
      const { redisStore } = await import("../redis/redis-store.js");
      return redisStore({
        connection: await redisClient(),
        timeoutMs: 5_000,
        ...(values["store-prefix"] ? { prefix: values["store-prefix"] } : {}),
      });
    },
    /** Where the command looked, for an error message: "Redis at redis://..." and the like. */
    where: () => places.join(" and ") || "its store",
    async close() {
      for (const close of closers.reverse()) await close().catch(() => {});
    },
  };
}
