import { z } from "zod";

/** `YYYY-MM`: the reconciliation lists filter by month, and a full date fails the platform's validation. */
export const monthSchema = z.string().regex(/^\d{4}-(?:0[1-9]|1[0-2])$/, "must be a month, YYYY-MM");

/** The month filters of the fund-split and profit-sharing lists. */
export const monthFiltersSchema = z.looseObject({
  transaction_begin_date: monthSchema.optional(),
  transaction_end_date: monthSchema.optional(),
});

/** page_number and page_size; both required, with no default, and page_size capped per endpoint. */
export function pageRequestSchema(maxPageSize: number) {
  return z.looseObject({
    page_number: z.int32().min(1),
    page_size: z.int32().min(1).max(maxPageSize),
  });
}

/** A page request to `endpoint`: page fields, and the month filters where the endpoint takes them. */
export function listRequestSchema(endpoint: { maxPageSize: number; monthFilters: boolean }) {
  const page = pageRequestSchema(endpoint.maxPageSize);
  return endpoint.monthFilters ? page.and(monthFiltersSchema) : page;
}

const pageEnvelopeSchema = z.looseObject({
  total: z.int().min(0),
  total_pages: z.int().min(0),
  page_number: z.int().min(0).optional(),
});

const pageRecordsSchema = z.array(z.record(z.string(), z.unknown()));

/**
 * A page: the envelope, and the records from the array the endpoint names (there is no generic
 * `items` field), handed back as `records`.
 */
export function pageResponseSchema(arrayField: string) {
  return pageEnvelopeSchema.transform((page, ctx) => {
    const records = pageRecordsSchema.safeParse((page as Record<string, unknown>)[arrayField] ?? []);
    if (!records.success) {
      for (const issue of records.error.issues)
        ctx.addIssue({ code: "custom", path: [arrayField, ...issue.path], message: issue.message });
      return z.NEVER;
    }
    return { total: page.total, total_pages: page.total_pages, page_number: page.page_number, records: records.data };
  });
}
