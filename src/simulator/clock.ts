/** RFC 3339 in UTC, to the second, as the platform writes its times. */
export function rfc3339(date: Date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Ids unique within one simulator, readable in a log: `ORD-000001`. */
export function idSequence(prefix: string): () => string {
  let next = 0;
  return () => `${prefix}-${String(++next).padStart(6, "0")}`;
}
