/** The fields of a receiver's or worker's log line that telemetry reads; it never reads any other. */
export interface ObservedLine {
  outcome: string;
  notification_id?: string;
  event_type?: string;
  subscription_id?: string;
  attempt?: number;
  status?: number;
  duration_ms?: number;
  /** Added when a span is recording, so a log line can be found from its trace and back. */
  trace_id?: string;
  span_id?: string;
}
