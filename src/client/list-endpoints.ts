/**
 * A paginated list endpoint: where it lives, what its records' array is called (the interface has no
 * generic `items` field), its page-size cap, and whether it takes the month filters.
 */
export interface ListEndpoint {
  path: string;
  arrayField: string;
  maxPageSize: number;
  monthFilters: boolean;
}

/** POST /v1/fund_split/get_detail_list: records in `order_detail`, at most 100 a page, month filters. */
export const FUND_SPLIT_DETAILS: ListEndpoint = {
  path: "/v1/fund_split/get_detail_list",
  arrayField: "order_detail",
  maxPageSize: 100,
  monthFilters: true,
};

/** POST /v1/merchant_quote/get_quotation_info: records in `quote_info`, at most 5000 a page. */
export const MERCHANT_QUOTES: ListEndpoint = {
  path: "/v1/merchant_quote/get_quotation_info",
  arrayField: "quote_info",
  maxPageSize: 5000,
  monthFilters: false,
};

/**
 * The profit-sharing detail list: at most 100 a page, month filters. Its path and array name are not
 * published, so they are given here.
 */
export function profitSharingDetails(where: { path: string; arrayField: string }): ListEndpoint {
  return { ...where, maxPageSize: 100, monthFilters: true };
}
