// Where the receiver's `record` option can keep notifications. The Redis recorder loads ioredis only
// when given a URL, so importing this entry does not require it.
export type { NotificationRecorder, RecordedNotification } from "./recorder.js";
export { jsonlRecorder, type JsonlRecorder, type JsonlRecorderOptions } from "./jsonl-recorder.js";
export {
  redisStreamRecorder,
  readRedisStream,
  DEFAULT_STREAM_MAX_LEN,
  type RedisStreamConnection,
  type RedisStreamRecorder,
  type RedisStreamRecorderOptions,
  type ReadRedisStreamOptions,
} from "./redis-stream-recorder.js";
