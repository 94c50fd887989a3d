// merchant-webhooks/console: the admin API and the notification console served over it.
export {
  createAdmin,
  AdminError,
  type Admin,
  type AdminOptions,
  type ListOptions,
  type NotificationDetail,
  type NotificationFilter,
  type NotificationPage,
  type NotificationSummary,
  type OrderingState,
  type Overview,
  type RedriveRequest,
  type RedriveResult,
  type ReplayResult,
  type TimelineEvent,
} from "./admin.js";
export type { JobView } from "./queue-jobs.js";
export {
  consoleHandler,
  CONSOLE_CSP,
  type ConsoleHandler,
  type ConsoleHandlerOptions,
} from "./console-handler.js";
export { memoryRecordings, jsonlRecordings, type MemoryRecordings, type RecordingSource } from "./recordings.js";
export type { ListedRecord, ListPage, ListQuery } from "../idempotency/store.js";
