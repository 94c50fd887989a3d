import type { RedactOptions } from "../logging/redact.js";
import { redactForRecording } from "./replayable-redaction.js";

/** One received notification as recordings keep it: a valid replay source once read back. */
export interface RecordedNotification {
  /** ISO 8601 receive time. */
  received_at: string;
  /** Request headers without signature, authorization or cookie headers. */
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

/** Headers that authenticate a delivery: a recording must not let anyone replay them as credentials. */
const SECRET_HEADER = /signature|authorization|cookie|token|secret|api-key|apikey/i;

export function recordingOf(
  headers: Readonly<Record<string, string>>,
  body: Record<string, unknown>,
  response: { status: number; answer: { processed: boolean; message: string } },
  receivedAt: number,
  redact: RedactOptions,
): RecordedNotification {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!SECRET_HEADER.test(name)) kept[name] = value;
  }
  return {
    received_at: new Date(receivedAt).toISOString(),
    headers: kept,
    notification: redactForRecording(body, redact),
    answer: { status: response.status, ...response.answer },
  };
}
