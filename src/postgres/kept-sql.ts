import type { QualifiedNames } from "./names.js";

/**
 * The statements of the store's `kept` (see kept-notifications.ts): an in-process queue's job data in
 * its record's `carried` column. Each is one statement on the record's row: its row lock orders it
 * with a claim or a settle of the same record, and the owner token fences it as they are fenced.
 */
export function keptStatements({ records }: QualifiedNames, retentionSeconds: number) {
  const live = `updated_at > clock_timestamp() - ${retentionSeconds}::float8 * interval '1 second'`;
  return {
    /**
     * $1 how many: the ids of processing records that keep data and whose lease lapsed, read along the
     * kept index (migration step 8) alone: rows read are the lapsed kept ones, not every processing one.
     */
    lapsed: `SELECT id FROM ${records} WHERE carried IS NOT NULL AND state = 'processing'
        AND lease_until <= clock_timestamp() AND ${live} ORDER BY lease_until LIMIT $1`,
    /** $1 id, $2 owner, $3 data: kept with the processing record the owner holds. */
    keep: `UPDATE ${records} SET carried = $3 WHERE id = $1 AND owner = $2 AND state = 'processing' AND ${live} RETURNING id`,
    /**
     * $1 id, $2 the new owner, $3 its lease (ms): a processing record whose lease lapsed and which keeps
     * data, taken over with one attempt more. Two at once: the second waits on the row lock, finds the
     * lease live again, and changes nothing.
     */
    resume: `UPDATE ${records} SET owner = $2, lease_until = clock_timestamp() + $3::float8 * interval '1 millisecond',
        attempts = attempts + 1, updated_at = clock_timestamp()
      WHERE id = $1 AND state = 'processing' AND carried IS NOT NULL
        AND (lease_until IS NULL OR lease_until <= clock_timestamp()) AND ${live}
      RETURNING attempts, carried`,
    /** $1 id, $2 the redrive's owner: a failed record that keeps data, processing again under a lapsed lease. */
    rerun: `UPDATE ${records} SET state = 'processing', owner = $2, lease_until = clock_timestamp(), error = NULL,
        updated_at = clock_timestamp()
      WHERE id = $1 AND state = 'failed' AND carried IS NOT NULL AND ${live} RETURNING id`,
    /** $1 id: one row when `rerun` would redrive it (the same conditions), none otherwise. */
    redrivable: `SELECT 1 FROM ${records} WHERE id = $1 AND state = 'failed' AND carried IS NOT NULL AND ${live}`,
  };
}
