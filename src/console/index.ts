// merchant-webhooks/console: the admin API and the notification console served over it.

export type { ListedRecord, ListPage, ListQuery } from "../idempotency/store.js";
export type {
  DeadLetter,
  DeadLetterJobs,
  JobAbout,
  JobFailure,
  JobView,
  QueueCounts,
  QueueJobs,
} from "../queue/queue-jobs.js";
export type { LanePlace } from "../queue/redrive-order.js";
export {
  type Admin,
  AdminError,
  type AdminOptions,
  type AdminRedriveResult,
  type AdminReplayResult,
  createAdmin,
  type NotificationDetail,
  type NotificationFilter,
  type NotificationListOptions,
  type NotificationPage,
  type NotificationSummary,
  type OrderingState,
  type Overview,
  type RedriveRequest,
  type TimelineEvent,
} from "./admin.js";
export {
  CONSOLE_CSP,
  type ConsoleHandler,
  type ConsoleHandlerOptions,
  consoleHandler,
} from "./console-handler.js";
export { jsonlRecordings } from "./jsonl-recordings.js";
export {
  type MemoryRecordings,
  memoryRecordings,
  type RecordingSource,
  type RecordingSummary,
} from "./recordings.js";
