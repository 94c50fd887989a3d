import { type ListedRecord, type ListPage, type ListQuery, listCursor } from "../idempotency/store.js";
import { type RecordRow, recordOf } from "./claim-sql.js";
import type { QualifiedNames } from "./names.js";
import type { Query } from "./sessions.js";

/**
 * The console's page of records, in SQL. The cursor keeps `updated_at` to the microsecond (the
 * column's own precision), so no record is skipped or repeated between two pages that share a
 * millisecond. Each state's records are read along the list index `(state, updated_at, id)`, at most
 * a page of each, and merged: a page costs about what it returns whatever the table holds, with a
 * state asked for or not (one scan of the whole table sorted by time, before, at any size).
 */
export function listStatement(names: QualifiedNames, retentionSeconds: number): string {
  return `SELECT page.* FROM
      unnest(CASE WHEN $1::text IS NULL THEN ARRAY['processing', 'queued', 'completed', 'failed'] ELSE ARRAY[$1::text] END)
        AS wanted(state)
    CROSS JOIN LATERAL (
      SELECT id, order_key, position, state, fingerprint, owner, attempts, answer, error, updated_at,
        (extract(epoch from lease_until) * 1000)::float8 AS lease_ms,
        (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms,
        (extract(epoch from updated_at) * 1000000)::bigint::text AS updated_us
      FROM ${names.records}
      WHERE state = wanted.state
        AND updated_at > clock_timestamp() - ${retentionSeconds}::float8 * interval '1 second'
        AND ($2::text IS NULL OR order_key = $2)
        AND ($3::float8 IS NULL OR updated_at >= timestamptz 'epoch' + $3::float8 * interval '1 millisecond')
        AND ($4::float8 IS NULL OR updated_at < timestamptz 'epoch' + ($4::float8 + 1) * interval '1 millisecond')
        AND ($8::text IS NULL OR id = $8)
        AND ($5::bigint IS NULL OR (updated_at, id) < (timestamptz 'epoch' + $5::bigint * interval '1 microsecond', $6::text))
      ORDER BY updated_at DESC, id DESC
      LIMIT $7
    ) AS page
    ORDER BY page.updated_at DESC, page.id DESC
    LIMIT $7`;
}

interface ListRow extends RecordRow {
  id: string;
  order_key: string | null;
  position: string | null;
  updated_us: string;
}

export async function listIn(query: Query, statement: string, request: ListQuery): Promise<ListPage> {
  const limit = listCursor.limitOf(request);
  const from = listCursor.parse(request.cursor);
  const rows = await query<ListRow>(statement, [
    request.state ?? null,
    request.orderKey ?? null,
    request.since ?? null,
    request.until ?? null,
    from ? String(from.updatedAt) : null,
    from?.id ?? null,
    limit + 1,
    request.id ?? null,
  ]);
  const items = rows.slice(0, limit).map((row): ListedRecord => {
    const item: ListedRecord = { ...recordOf(row), id: row.id, updatedAt: Math.floor(Number(row.updated_us) / 1000) };
    if (row.order_key !== null)
      item.order = row.position === null ? { key: row.order_key } : { key: row.order_key, position: row.position };
    return item;
  });
  if (rows.length <= limit) return { items };
  const last = rows[limit - 1]!;
  return { items, cursor: listCursor.of({ updatedAt: Number(last.updated_us), id: last.id }) };
}
