/**
 * Which queue an ordered lane was appended for. One store may serve several queues, their lanes side
 * by side, and the sweep that wakes a stalled lane must wake it in its own queue: a lane woken in
 * another would run under that queue's workers and handlers. The receiver's queue names itself last in
 * the job data the lane keeps (`AppendClaim.carried`), so a store can tell without parsing the data
 * (a Redis script compares the text's end).
 */
const NAMED_AT_END = /,"queue":("[^"\\]*")}$/;

/** How data kept for `queue` ends: what a store compares a lane's kept data with. */
export const laneQueueEnding = (queue: string): string => `,"queue":${JSON.stringify(queue)}}`;

/**
 * Whether a lane whose head keeps `carried` may be woken by `queue`'s sweep: it names that queue, or
 * names none (kept before lanes named their queue, or by a store that keeps no data), or no queue asks.
 */
export function appendedFor(carried: string | undefined, queue: string | undefined): boolean {
  if (queue === undefined || carried === undefined) return true;
  return !NAMED_AT_END.test(carried) || carried.endsWith(laneQueueEnding(queue));
}
