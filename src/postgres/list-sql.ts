import { type ListedRecord, type ListPage, type ListQuery, listCursor } from "../idempotency/store.js";
import { type RecordRow, recordOf } from "./claim-sql.js";
import type { QualifiedNames } from "./names.js";
import type { Query } from "./sessions.js";

/** The list's statements, one per index a page is read along (see `listStatements`). */
export interface ListStatements {
  byState: string;
  byEventType: string;
  bySubscription: string;
}

/**
 * The console's page of records, in SQL, read along the index that fits its filters so that a page
 * costs about what it returns whatever the table holds: a subscription's records along
 * `(subscription_id, updated_at, id)`, an event type's along `(event_type, updated_at, id)`, and any
 * other page along the list index `(state, updated_at, id)`, each state's records read (at most a page
 * of each) and merged. The other filters are conditions on the rows read. The cursor keeps
 * `updated_at` to the microsecond (the column's own precision), so no record is skipped or repeated
 * between two pages that share a millisecond.
 */
export function listStatements(names: QualifiedNames, retentionSeconds: number): ListStatements {
  const page = (from: string, where: string) => `SELECT id, order_key, position, state, fingerprint, owner, attempts,
        answer, error, event_type, subscription_id, updated_at,
        (extract(epoch from lease_until) * 1000)::float8 AS lease_ms,
        (extract(epoch from clock_timestamp()) * 1000)::float8 AS now_ms,
        (extract(epoch from updated_at) * 1000000)::bigint::text AS updated_us
      FROM ${from}
      WHERE ${where}
        AND updated_at > clock_timestamp() - ${retentionSeconds}::float8 * interval '1 second'
        AND ($1::text IS NULL OR state = $1)
        AND ($2::text IS NULL OR order_key = $2)
        AND ($3::float8 IS NULL OR updated_at >= timestamptz 'epoch' + $3::float8 * interval '1 millisecond')
        AND ($4::float8 IS NULL OR updated_at < timestamptz 'epoch' + ($4::float8 + 1) * interval '1 millisecond')
        AND ($8::text IS NULL OR id = $8)
        AND ($9::text IS NULL OR event_type = $9)
        AND ($10::text IS NULL OR subscription_id = $10)
        AND ($5::bigint IS NULL OR (updated_at, id) < (timestamptz 'epoch' + $5::bigint * interval '1 microsecond', $6::text))
      ORDER BY updated_at DESC, id DESC
      LIMIT $7`;
  return {
    byState: `SELECT page.* FROM
      unnest(CASE WHEN $1::text IS NULL THEN ARRAY['processing', 'queued', 'completed', 'failed'] ELSE ARRAY[$1::text] END)
        AS wanted(state)
    CROSS JOIN LATERAL (${page(names.records, "state = wanted.state")}) AS page
    ORDER BY page.updated_at DESC, page.id DESC
    LIMIT $7`,
    byEventType: page(names.records, "event_type = $9"),
    bySubscription: page(names.records, "subscription_id = $10"),
  };
}

/** The statement a page with these filters is read with: along the narrowest index its filters name. */
const statementFor = (statements: ListStatements, request: ListQuery) =>
  request.subscriptionId !== undefined
    ? statements.bySubscription
    : request.eventType !== undefined
      ? statements.byEventType
      : statements.byState;

interface ListRow extends RecordRow {
  id: string;
  order_key: string | null;
  position: string | null;
  updated_us: string;
  event_type: string | null;
  subscription_id: string | null;
}

export async function listIn(query: Query, statements: ListStatements, request: ListQuery): Promise<ListPage> {
  const limit = listCursor.limitOf(request);
  const from = listCursor.parse(request.cursor);
  const rows = await query<ListRow>(statementFor(statements, request), [
    request.state ?? null,
    request.orderKey ?? null,
    request.since ?? null,
    request.until ?? null,
    from ? String(from.updatedAt) : null,
    from?.id ?? null,
    limit + 1,
    request.id ?? null,
    request.eventType ?? null,
    request.subscriptionId ?? null,
  ]);
  const items = rows.slice(0, limit).map((row): ListedRecord => {
    const item: ListedRecord = { ...recordOf(row), id: row.id, updatedAt: Math.floor(Number(row.updated_us) / 1000) };
    if (row.event_type !== null) item.eventType = row.event_type;
    if (row.subscription_id !== null) item.subscriptionId = row.subscription_id;
    if (row.order_key !== null)
      item.order = row.position === null ? { key: row.order_key } : { key: row.order_key, position: row.position };
    return item;
  });
  if (rows.length <= limit) return { items };
  const last = rows[limit - 1]!;
  return { items, cursor: listCursor.of({ updatedAt: Number(last.updated_us), id: last.id }) };
}
