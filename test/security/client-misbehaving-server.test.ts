import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createPaymentClient,
  DEFAULT_MAX_RESPONSE_BYTES,
  FUND_SPLIT_DETAILS,
  PaymentApiError,
} from "merchant-webhooks/client";
import { afterEach, describe, expect, it } from "vitest";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A local server answering with `answer`, recording every request it gets. */
async function serve(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      answer(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { seen, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (err: unknown) => err as PaymentApiError,
  );

const retry = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
const sign = () => ({ "x-signature": "sig-secret-value" });
const refund = { origin_id: { origin_order_id: "ORD-1" }, reference_id: "refund-1" };

describe("a server streaming an endless answer", () => {
  it("is cut off at maxResponseBytes, the query is not retried, and the server gets to send little more", async () => {
    let written = 0;
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const chunk = Buffer.alloc(64 * 1024, "a");
    const { seen, baseUrl } = await serve((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.on("close", closed);
      const pump = () => {
        while (!res.destroyed && written < 1024 ** 3) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
      };
      pump();
    });
    const client = createPaymentClient({ baseUrl, retry, maxResponseBytes: 1024 * 1024 });
    const before = process.memoryUsage().arrayBuffers;
    const err = await failure(client.queryOrder({ id: "ORD-1" }));
    expect(err).toBeInstanceOf(PaymentApiError);
    expect(err.code).toBe("MW_CLIENT_RESPONSE_TOO_LARGE");
    expect(err.message).toContain("maxResponseBytes (1048576 bytes)");
    expect(seen).toHaveLength(1);
    await connectionClosed;
    // What the sockets' buffers held at most: far from the gigabyte the server meant to send.
    expect(written).toBeLessThan(64 * 1024 * 1024);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("is refused unread when its content-length is over the default 10 MiB", async () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(10 * 1024 * 1024);
    const { seen, baseUrl } = await serve((_, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(11 * 1024 * 1024) });
      res.write("{");
    });
    const client = createPaymentClient({ baseUrl, retry });
    const err = await failure(client.queryOrder({ id: "ORD-1" }));
    expect(err.code).toBe("MW_CLIENT_RESPONSE_TOO_LARGE");
    expect(seen).toHaveLength(1);
  });

  it("still reads an answer of exactly the limit", async () => {
    const answer = JSON.stringify({ id: "ORD-1", status: "PAYED", pad: "" });
    const padded = answer.replace('"pad":""', `"pad":"${"x".repeat(1000 - answer.length)}"`);
    const { baseUrl } = await serve((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(padded);
    });
    const client = createPaymentClient({ baseUrl, maxResponseBytes: 1000 });
    await expect(client.queryOrder({ id: "ORD-1" })).resolves.toMatchObject({ id: "ORD-1" });
  });
});

describe("a server answering with a redirect", () => {
  it("does not get the refund body or its signature sent to the other host, and the refund fails", async () => {
    const elsewhere = await serve((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "FAKE", status: "REFUNDED" }));
    });
    const platform = await serve((_, res) => {
      res.writeHead(307, { location: `${elsewhere.baseUrl}/v1/refund/orders` });
      res.end();
    });
    const client = createPaymentClient({ baseUrl: platform.baseUrl, sign, retry });
    const err = await failure(client.refundPayment(refund));
    expect(err).toMatchObject({ status: 307, code: "MW_CLIENT_REDIRECT_REFUSED" });
    expect(platform.seen).toHaveLength(1);
    expect(platform.seen[0]!.headers["x-signature"]).toBe("sig-secret-value");
    expect(elsewhere.seen).toHaveLength(0);
  });

  it("refuses a 302 on a query too, without retrying it or following it", async () => {
    const elsewhere = await serve((_, res) => res.end("{}"));
    const platform = await serve((_, res) => {
      res.writeHead(302, { location: `${elsewhere.baseUrl}/steal` });
      res.end();
    });
    const client = createPaymentClient({ baseUrl: platform.baseUrl, sign, retry });
    const err = await failure(client.queryOrder({ id: "ORD-1" }));
    expect(err).toMatchObject({ status: 302, code: "MW_CLIENT_REDIRECT_REFUSED" });
    expect(platform.seen).toHaveLength(1);
    expect(elsewhere.seen).toHaveLength(0);
  });
});

describe("timeoutMs", () => {
  it.each([0, -1, Number.NaN, 2 ** 31, Number.POSITIVE_INFINITY, 1.5])("refuses %s at construction", (timeoutMs) => {
    expect(() => createPaymentClient({ baseUrl: "http://platform.invalid", timeoutMs })).toThrow(
      /timeoutMs must be a whole number from 1 to 2147483647/,
    );
  });

  it("takes 1 and 2^31-1", () => {
    expect(() => createPaymentClient({ baseUrl: "http://platform.invalid", timeoutMs: 1 })).not.toThrow();
    expect(() => createPaymentClient({ baseUrl: "http://platform.invalid", timeoutMs: 2 ** 31 - 1 })).not.toThrow();
  });

  it("refuses a maxResponseBytes that is not a positive whole number", () => {
    for (const maxResponseBytes of [0, -5, Number.NaN, 0.5])
      expect(() => createPaymentClient({ baseUrl: "http://platform.invalid", maxResponseBytes })).toThrow(
        /maxResponseBytes/,
      );
  });
});

describe("pagination against a server that never ends", () => {
  const page = (pageNumber: number, records: unknown[]) =>
    JSON.stringify({ total: 2 ** 31 - 1, total_pages: 2 ** 31 - 1, page_number: pageNumber, order_detail: records });

  it("stops with an error on the first page that brings no new record", async () => {
    const { seen, baseUrl } = await serve((_, res) => res.end(page(1, [{ id: "same" }])));
    const client = createPaymentClient({ baseUrl });
    const records: unknown[] = [];
    const err = await failure(
      (async () => {
        for await (const record of client.fundSplitDetails({ pageSize: 100 })) records.push(record);
      })(),
    );
    expect(err.message).toMatch(/page 2 brought no record not seen before/);
    expect(records).toEqual([{ id: "same" }]);
    expect(seen).toHaveLength(2);
  });

  it("stops with an error after the default 1,000 pages when each brings new records", async () => {
    // In-process answers: a thousand HTTP round trips would only cost time.
    const asked: number[] = [];
    const client = createPaymentClient({
      baseUrl: "http://platform.invalid",
      fetch: async (_, init) => {
        const n = (JSON.parse(String(init?.body)) as { page_number: number }).page_number;
        asked.push(n);
        return new Response(page(n, [{ id: `r-${n}` }]), { headers: { "content-type": "application/json" } });
      },
    });
    let count = 0;
    const err = await failure(
      (async () => {
        for await (const _ of client.paginate(FUND_SPLIT_DETAILS, { pageSize: 1 })) count++;
      })(),
    );
    expect(err.message).toMatch(/stopped after 1000 pages/);
    expect(count).toBe(1000);
    expect(asked).toHaveLength(1000);
    expect(asked.at(-1)).toBe(1000);
  });

  it("ends quietly at a maxPages the caller gave", async () => {
    const { seen, baseUrl } = await serve((_, res, body) => {
      const n = (JSON.parse(body) as { page_number: number }).page_number;
      res.end(page(n, [{ id: `r-${n}` }]));
    });
    const client = createPaymentClient({ baseUrl });
    const ids: unknown[] = [];
    for await (const record of client.fundSplitDetails({ pageSize: 1, maxPages: 3 })) ids.push(record.id);
    expect(ids).toEqual(["r-1", "r-2", "r-3"]);
    expect(seen).toHaveLength(3);
  });
});
