import {
  createPaymentClient,
  FUND_SPLIT_DETAILS,
  InvalidRequestError,
  type ListRecord,
  MERCHANT_QUOTES,
} from "merchant-webhooks/client";
import { createPlatformSimulator, type PlatformSimulator } from "merchant-webhooks/simulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const RECORDS = 1_234;
const PAGE_SIZE = 100;
const INSERTED_PER_PAGE = 7;

/** 1,234 fund-split records in October 2026, one second apart, oldest last. */
function octoberRecords() {
  const start = Date.parse("2026-10-31T23:00:00Z");
  return Array.from({ length: RECORDS }, (_, i) => ({
    detail_id: `FS-${String(i).padStart(5, "0")}`,
    transaction_time: new Date(start - i * 1000).toISOString(),
    amount: { currency_code: "EUR", value: "1.00" },
  }));
}

describe("paginate over a list while records are inserted between pages", () => {
  let sim: PlatformSimulator;
  let baseUrl: string;

  beforeAll(async () => {
    sim = createPlatformSimulator({ seed: 2 });
    baseUrl = await sim.listen(0);
    sim.lists.insert("fund_split", ...octoberRecords());
  });
  afterAll(() => sim.close());

  it("yields each of the 1,234 records once although inserts pushed records onto later pages", async () => {
    let pages = 0;
    let rawRecords = 0;
    const pageNumbers: number[] = [];
    // A fetch that lets the page through, then inserts newer records (which sort first), as live
    // traffic would between two page fetches.
    const insertingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const body = JSON.parse(String(init?.body)) as { page_number: number };
      pageNumbers.push(body.page_number);
      const text = await response.text();
      rawRecords += (JSON.parse(text) as { order_detail: unknown[] }).order_detail.length;
      pages++;
      sim.lists.insert(
        "fund_split",
        ...Array.from({ length: INSERTED_PER_PAGE }, (_, i) => ({
          detail_id: `NEW-${pages}-${i}`,
          transaction_time: `2026-10-31T23:30:${String(pages).padStart(2, "0")}Z`,
        })),
      );
      return new Response(text, { status: response.status, headers: response.headers });
    };
    const client = createPaymentClient({ baseUrl, fetch: insertingFetch });

    const seen: ListRecord[] = [];
    for await (const record of client.fundSplitDetails({
      pageSize: PAGE_SIZE,
      filters: { transaction_begin_date: "2026-10", transaction_end_date: "2026-10" },
      key: (record) => String(record.detail_id),
    })) {
      seen.push(record);
    }

    const ids = seen.map((record) => String(record.detail_id));
    expect(new Set(ids).size).toBe(ids.length);
    const original = ids.filter((id) => id.startsWith("FS-"));
    expect(original).toHaveLength(RECORDS);
    // The inserts shifted records across page boundaries: the pages held repeats that were dropped.
    expect(rawRecords).toBeGreaterThan(seen.length);
    expect(pageNumbers[0]).toBe(1);
    // total_pages grew with the inserts and was re-read each time: more pages than 1,234 / 100 rounds up to.
    expect(pages).toBeGreaterThan(Math.ceil(RECORDS / PAGE_SIZE));
  });

  it("returns pages in a deterministic order with a unique tie-breaker when records share a time", async () => {
    const client = createPaymentClient({ baseUrl });
    const sameTime = "2026-09-15T12:00:00Z";
    sim.lists.insert(
      "fund_split",
      { detail_id: "TIE-B", transaction_time: sameTime },
      { detail_id: "TIE-A", transaction_time: sameTime },
      { detail_id: "TIE-C", transaction_time: sameTime },
    );
    const filters = { transaction_begin_date: "2026-09", transaction_end_date: "2026-09" };
    const first = await client.listPage(FUND_SPLIT_DETAILS, { page_number: 1, page_size: 2, filters });
    const again = await client.listPage(FUND_SPLIT_DETAILS, { page_number: 1, page_size: 2, filters });
    expect(first.records.map((record) => record.detail_id)).toEqual(["TIE-A", "TIE-B"]);
    expect(again.records).toEqual(first.records);
    expect(first).toMatchObject({ total: 3, total_pages: 2, page_number: 1 });
  });

  it("throws before sending for a full date in a month filter or a page size over the endpoint's cap", async () => {
    const before = sim.requestCount;
    const client = createPaymentClient({ baseUrl });
    const fullDate = client
      .fundSplitDetails({ pageSize: 10, filters: { transaction_begin_date: "2026-10-01" } })
      .next();
    await expect(fullDate).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(fullDate).rejects.toThrow(/transaction_begin_date/);
    await expect(client.fundSplitDetails({ pageSize: 101 }).next()).rejects.toThrow(/page_size/);
    await expect(client.listPage(MERCHANT_QUOTES, { page_number: 0, page_size: 10 })).rejects.toThrow(/page_number/);
    expect(sim.requestCount).toBe(before);
    // Merchant quotes allow pages of up to 5,000.
    await expect(client.listPage(MERCHANT_QUOTES, { page_number: 1, page_size: 5000 })).resolves.toMatchObject({
      total: 0,
      records: [],
    });
  });
});
