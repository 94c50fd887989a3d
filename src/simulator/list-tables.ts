import {
  FUND_SPLIT_DETAILS,
  type ListEndpoint,
  MERCHANT_QUOTES,
  profitSharingDetails,
} from "../client/list-endpoints.js";
import { listRequestSchema } from "../client/schemas/pagination.js";
import { parseRequest } from "./api-error.js";
import { idSequence, rfc3339 } from "./clock.js";

/**
 * The record fields of the list endpoints are not published. The simulator's records carry a unique
 * key and a time, which is all the pagination rules need: sorted newest first, ties broken by the key.
 */
interface TableSpec {
  endpoint: ListEndpoint;
  keyField: string;
  timeField: string;
}

/** Where the simulator serves the profit-sharing list, whose path and array name are not published. */
export const SIMULATED_PROFIT_SHARING = profitSharingDetails({
  path: "/v1/profit_sharing/get_detail_list",
  arrayField: "profit_sharing_detail",
});

export const LIST_TABLES = {
  fund_split: { endpoint: FUND_SPLIT_DETAILS, keyField: "detail_id", timeField: "transaction_time" },
  profit_sharing: { endpoint: SIMULATED_PROFIT_SHARING, keyField: "detail_id", timeField: "transaction_time" },
  merchant_quote: { endpoint: MERCHANT_QUOTES, keyField: "quote_id", timeField: "create_time" },
} as const satisfies Record<string, TableSpec>;

export type ListTableName = keyof typeof LIST_TABLES;
export type SimulatedRecord = Record<string, unknown>;

export function createListTables() {
  const tables = new Map<ListTableName, SimulatedRecord[]>(
    Object.keys(LIST_TABLES).map((name) => [name as ListTableName, []]),
  );
  const keys = idSequence("REC");

  function sorted(name: ListTableName): SimulatedRecord[] {
    const { keyField, timeField } = LIST_TABLES[name];
    // Deterministic: newest first, then by the unique key, so unchanged data pages the same way every time.
    return [...tables.get(name)!].sort((a, b) => {
      const time = String(b[timeField]).localeCompare(String(a[timeField]));
      return time !== 0 ? time : String(a[keyField]).localeCompare(String(b[keyField]));
    });
  }

  return {
    /** Add records; a missing key or time is filled in (a fresh key, now). */
    insert(name: ListTableName, ...records: SimulatedRecord[]): SimulatedRecord[] {
      const { keyField, timeField } = LIST_TABLES[name];
      const added = records.map((record) => ({ [keyField]: keys(), [timeField]: rfc3339(), ...record }));
      tables.get(name)!.push(...added);
      return added;
    },

    remove(name: ListTableName, key: string): boolean {
      const table = tables.get(name)!;
      const index = table.findIndex((record) => record[LIST_TABLES[name].keyField] === key);
      if (index >= 0) table.splice(index, 1);
      return index >= 0;
    },

    size: (name: ListTableName) => tables.get(name)!.length,

    page(name: ListTableName, body: unknown): Record<string, unknown> {
      const { endpoint, timeField } = LIST_TABLES[name];
      const request = parseRequest(listRequestSchema(endpoint), body) as {
        page_number: number;
        page_size: number;
        transaction_begin_date?: string;
        transaction_end_date?: string;
      };
      const matching = sorted(name).filter((record) => {
        const month = String(record[timeField]).slice(0, 7);
        if (request.transaction_begin_date && month < request.transaction_begin_date) return false;
        if (request.transaction_end_date && month > request.transaction_end_date) return false;
        return true;
      });
      const start = (request.page_number - 1) * request.page_size;
      return {
        total: matching.length,
        total_pages: Math.ceil(matching.length / request.page_size),
        page_number: request.page_number,
        [endpoint.arrayField]: matching.slice(start, start + request.page_size),
      };
    },
  };
}

export type ListTables = ReturnType<typeof createListTables>;
