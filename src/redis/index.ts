// merchant-webhooks/redis: the idempotency store shared by receivers and workers through one Redis.

export { StoreUnavailableError } from "../idempotency/store.js";
export type { RedisConnection } from "./connect.js";
export { DEFAULT_STORE_TIMEOUT_MS, failFastRedisOptions, type RedisClient } from "./fail-fast-connection.js";
export { DEFAULT_REDIS_PREFIX, type RedisStore, type RedisStoreOptions, redisStore } from "./redis-store.js";
export {
  DEFAULT_STREAM_MAX_LEN,
  type ReadRedisStreamOptions,
  type RedisStreamRecorder,
  type RedisStreamRecorderOptions,
  readRedisStream,
  redisStreamRecorder,
} from "./stream-recorder.js";
