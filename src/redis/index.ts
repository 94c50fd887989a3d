// merchant-webhooks/redis: the idempotency store shared by receivers and workers through one Redis.
export { redisStore, DEFAULT_REDIS_PREFIX, type RedisStore, type RedisStoreOptions } from "./redis-store.js";
export { failFastRedisOptions, DEFAULT_STORE_TIMEOUT_MS, type RedisClient } from "./fail-fast-connection.js";
export type { RedisConnection } from "./connect.js";
export { StoreUnavailableError } from "../idempotency/store.js";
export {
  redisStreamRecorder,
  readRedisStream,
  DEFAULT_STREAM_MAX_LEN,
  type RedisStreamRecorder,
  type RedisStreamRecorderOptions,
  type ReadRedisStreamOptions,
} from "./stream-recorder.js";
