import { keptHeaders } from "./kept-headers.js";
import type { RedactOptions } from "./redact.js";
import { redactForRecording } from "./replayable-redaction.js";

/** One received notification as recordings keep it: a valid replay source once read back. */
export interface RecordedNotification {
  /** ISO 8601 receive time. */
  received_at: string;
  /** The request headers that describe the delivery (`KEPT_HEADERS`); never credentials or signatures. */
  headers: Record<string, string>;
  /**
   * The parsed body with card data (and, by default, personal data) redacted, in a form that still
   * passes the schema: see `redactForRecording`.
   */
  notification: Record<string, unknown>;
  answer: { status: number; processed: boolean; message: string };
}

/** The receiver's `record` option: where received notifications go. Writes never delay the answer. */
export interface NotificationRecorder {
  write(entry: RecordedNotification): void | Promise<void>;
  close?(): Promise<void>;
}

export function recordingOf(
  headers: Readonly<Record<string, string>>,
  body: Record<string, unknown>,
  response: { status: number; answer: { processed: boolean; message: string } },
  receivedAt: number,
  redact: RedactOptions,
): RecordedNotification {
  return {
    received_at: new Date(receivedAt).toISOString(),
    headers: keptHeaders(headers),
    notification: redactForRecording(body, redact),
    answer: { status: response.status, ...response.answer },
  };
}
