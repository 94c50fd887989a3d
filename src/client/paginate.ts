import { createHash } from "node:crypto";
import { canonicalJson } from "../shared/canonical-json.js";
import { InvalidRequestError, PaymentApiError } from "./errors.js";
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
  /**
   * Read at most this many pages (deep paging is slow and may be throttled). Default 1,000: reaching
   * it while the answer announces more pages is an error, so a server that never stops cannot keep
   * the loop going; a limit given here ends the list quietly instead.
   */
  maxPages?: number;
}

export interface Page<R extends ListRecord = ListRecord> {
  total: number;
  total_pages: number;
  page_number: number;
  records: R[];
}

/** Each endpoint's schemas, built once: building a schema costs far more than using it. */
const SCHEMAS = new WeakMap<
  ListEndpoint,
  { request: ReturnType<typeof listRequestSchema>; response: ReturnType<typeof pageResponseSchema> }
>();

function schemasOf(endpoint: ListEndpoint) {
  let schemas = SCHEMAS.get(endpoint);
  if (!schemas) {
    schemas = { request: listRequestSchema(endpoint), response: pageResponseSchema(endpoint.arrayField) };
    SCHEMAS.set(endpoint, schemas);
  }
  return schemas;
}

/** Fetch one page, checking the request against the endpoint's rules before it is sent. */
export async function fetchPage<R extends ListRecord>(
  transport: Transport,
  endpoint: ListEndpoint,
  request: { page_number: number; page_size: number; filters?: Record<string, unknown> | undefined },
): Promise<Page<R>> {
  const body = { ...request.filters, page_number: request.page_number, page_size: request.page_size };
  const schemas = schemasOf(endpoint);
  const checked = schemas.request.safeParse(body);
  if (!checked.success) throw new InvalidRequestError(endpoint.path, checked.error.issues);
  const page = await transport(endpoint.path, body, schemas.response, { idempotent: true });
  return {
    total: page.total,
    total_pages: page.total_pages,
    page_number: page.page_number ?? request.page_number,
    records: page.records as R[],
  };
}

export const DEFAULT_MAX_PAGES = 1_000;

/**
 * How many record keys are remembered for deduplication: a record shifted onto the next page by an
 * insert is caught within this window, and memory stays bounded however long the list. Keys are
 * hashed, so a record's size does not count either.
 */
const SEEN_WINDOW_MIN = 10_000;

/**
 * Every record of a list, page after page from page 1, each record once (pagination rule 2).
 * `total_pages` is read from every answer, never kept from the first (rule 3: it can grow). A page
 * that brings no record not seen before is an error: a server repeating itself would loop forever.
 */
export async function* paginate<R extends ListRecord = ListRecord>(
  transport: Transport,
  endpoint: ListEndpoint,
  options: PaginateOptions<R>,
): AsyncGenerator<R, void, undefined> {
  const keyOf = options.key ?? contentKey;
  const seen = new SeenWindow(Math.max(SEEN_WINDOW_MIN, 2 * options.pageSize));
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  for (let pageNumber = 1; ; pageNumber++) {
    const page = await fetchPage<R>(transport, endpoint, {
      page_number: pageNumber,
      page_size: options.pageSize,
      filters: options.filters,
    });
    let fresh = 0;
    for (const record of page.records) {
      if (!seen.add(keyOf(record))) continue;
      fresh++;
      yield record;
    }
    if (page.records.length === 0 || pageNumber >= page.total_pages) return;
    if (fresh === 0)
      throw new PaymentApiError(
        `${endpoint.path}: page ${pageNumber} brought no record not seen before; stopped rather than loop`,
        { status: 200 },
      );
    if (pageNumber >= maxPages) {
      if (options.maxPages !== undefined) return;
      throw new PaymentApiError(
        `${endpoint.path}: stopped after ${maxPages} pages (the default maxPages) while the answer announces ${page.total_pages}; pass maxPages to read further`,
        { status: 200 },
      );
    }
  }
}

/** The last `capacity` keys added, as hashes; the oldest forgotten first. */
class SeenWindow {
  private readonly keys = new Set<string>();
  constructor(private readonly capacity: number) {}

  /** False when `key` is among the remembered ones. */
  add(key: string): boolean {
    const hash = createHash("sha256").update(key).digest("base64");
    if (this.keys.has(hash)) return false;
    this.keys.add(hash);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value!);
    return true;
  }
}

/** The record's canonical JSON (keys sorted): equal content, equal key. */
const contentKey = (record: ListRecord): string => canonicalJson(record);
