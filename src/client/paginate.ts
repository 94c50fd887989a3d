import { canonicalJson } from "../shared/canonical-json.js";
import { InvalidRequestError } from "./errors.js";
import type { ListEndpoint } from "./list-endpoints.js";
import { listRequestSchema, pageResponseSchema } from "./schemas/pagination.js";
import type { Transport } from "./transport.js";

export type ListRecord = Record<string, unknown>;

export interface PaginateOptions<R extends ListRecord = ListRecord> {
  /** Records per page: required (the interface has no default) and at most the endpoint's cap. */
  pageSize: number;
  /** Filters sent with every page, e.g. `{ transaction_begin_date: "2026-10" }`. */
  filters?: Record<string, unknown>;
  /**
   * The record's natural primary key, for deduplication (an insert between two page fetches shifts a
   * record onto the next page too). The record fields are not published; by default a record is keyed
   * by its whole content, which drops exact repeats only.
   */
  key?: (record: R) => string;
  /** Stop after this many pages (deep paging is slow and may be throttled). Default: no limit. */
  maxPages?: number;
}

export interface Page<R extends ListRecord = ListRecord> {
  total: number;
  total_pages: number;
  page_number: number;
  records: R[];
}

/** Fetch one page, checking the request against the endpoint's rules before it is sent. */
export async function fetchPage<R extends ListRecord>(
  transport: Transport,
  endpoint: ListEndpoint,
  request: { page_number: number; page_size: number; filters?: Record<string, unknown> | undefined },
): Promise<Page<R>> {
  const body = { ...request.filters, page_number: request.page_number, page_size: request.page_size };
  const checked = listRequestSchema(endpoint).safeParse(body);
  if (!checked.success) throw new InvalidRequestError(endpoint.path, checked.error.issues);
  const page = await transport(endpoint.path, body, pageResponseSchema(endpoint.arrayField), { idempotent: true });
  return {
    total: page.total,
    total_pages: page.total_pages,
    page_number: page.page_number ?? request.page_number,
    records: page.records as R[],
  };
}

/**
 * Every record of a list, page after page from page 1, each record once (pagination rule 2).
 * `total_pages` is read from every answer, never kept from the first (rule 3: it can grow).
 */
export async function* paginate<R extends ListRecord = ListRecord>(
  transport: Transport,
  endpoint: ListEndpoint,
  options: PaginateOptions<R>,
): AsyncGenerator<R, void, undefined> {
  const keyOf = options.key ?? contentKey;
  const seen = new Set<string>();
  const maxPages = options.maxPages ?? Number.POSITIVE_INFINITY;
  for (let pageNumber = 1; pageNumber <= maxPages; pageNumber++) {
    const page = await fetchPage<R>(transport, endpoint, {
      page_number: pageNumber,
      page_size: options.pageSize,
      filters: options.filters,
    });
    for (const record of page.records) {
      const key = keyOf(record);
      if (seen.has(key)) continue;
      seen.add(key);
      yield record;
    }
    if (page.records.length === 0 || pageNumber >= page.total_pages) return;
  }
}

/** The record's canonical JSON (keys sorted): equal content, equal key. */
const contentKey = (record: ListRecord): string => canonicalJson(record);
