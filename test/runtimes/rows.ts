// The status table's rows, asked of the app in worker.ts over HTTP, whichever runtime serves it.

import { connect } from "node:net";
import { signHmac, signStandardWebhook } from "merchant-webhooks/testing";
import { describe, expect, it } from "vitest";
import { httpClient, type Received } from "../conformance/clients.js";
import { notification } from "../support/notifications.js";
import { RUNTIME_HMAC, RUNTIME_LIMITS, RUNTIME_STANDARD_SECRET } from "./settings.js";

const MODES = {
  plain: async (_body: Uint8Array): Promise<Record<string, string>> => ({}),
  hmac: (body: Uint8Array) => signHmac(body, RUNTIME_HMAC),
  standard: (body: Uint8Array) => signStandardWebhook(body, RUNTIME_STANDARD_SECRET),
};
const encode = (text: string) => new TextEncoder().encode(text);
const bytesOf = (body: unknown) => (body instanceof Uint8Array ? body : encode(JSON.stringify(body)));
let sequence = 0;
const idFor = (prefix: string) => `${prefix}-${process.pid}-${Date.now()}-${++sequence}`;

/** Every row on `origin()` (resolved once the runtime is up), for both adapters and each signing mode. */
export function runtimeRows(origin: () => string): void {
  for (const adapter of ["fetch", "hono"] as const)
    for (const [mode, sign] of Object.entries(MODES))
      describe(`${adapter}, ${mode === "plain" ? "unsigned" : `signed (${mode}, Web Crypto)`}`, () => {
        const url = () => `${origin()}/${adapter}/${mode}`;
        const post = async (
          body: unknown,
          options: {
            streamed?: boolean;
            neverEnds?: boolean;
            contentType?: string;
            signed?: Uint8Array;
            unsigned?: boolean;
          } = {},
        ): Promise<Received> => {
          const bytes = bytesOf(body);
          const signature = options.unsigned ? {} : await sign(options.signed ?? bytes);
          const headers = { "content-type": options.contentType ?? "application/json", ...signature };
          return httpClient(url())({
            method: "POST",
            headers,
            body: bytes,
            streamed: options.streamed,
            neverEnds: options.neverEnds,
          });
        };
        const callsOf = async (id: string) =>
          ((await (await fetch(`${origin()}/calls?id=${encodeURIComponent(id)}`)).json()) as { calls: number }).calls;

        it.each([
          ["SUBSCRIPTION_CREATED"],
          ["SUBSCRIPTION_RENEW"],
          ["SUBSCRIPTION_CANCELLED"],
          ["SUBSCRIPTION_SUSPENDED"],
          ["UNKNOWN"],
        ])("200 processed for %s, its handler called once; a redelivery 200 already processed", async (eventType) => {
          const body = notification(eventType, idFor("event"));
          expect(await post(body)).toMatchObject({ status: 200, body: { processed: true, message: "processed" } });
          expect(await post(body)).toMatchObject({
            status: 200,
            body: { processed: true, message: "already processed" },
          });
          expect(await callsOf(body.id)).toBe(1);
        });

        it("200 when no handler is registered for the event type", async () => {
          const response = await post(notification("SUBSCRIPTION_RESUMED", idFor("resumed")));
          expect(response.status).toBe(200);
          expect(response.body.message).toMatch(/^no handler for this event type/);
        });

        it("409 with Retry-After while the same id is being processed", async () => {
          const body = notification("SUBSCRIPTION_RENEW", idFor("hold"));
          const first = post(body);
          await expect.poll(() => callsOf(body.id)).toBe(1);
          const second = await post(body);
          expect(second).toMatchObject({ status: 409, body: { processed: false } });
          expect(Number(second.headers["retry-after"])).toBeGreaterThanOrEqual(1);
          await fetch(`${origin()}/release?id=${body.id}`, { method: "POST" });
          expect((await first).status).toBe(200);
        });

        it("422 for a completed id redelivered with another payload", async () => {
          const body = notification("SUBSCRIPTION_CANCELLED", idFor("changed"));
          await post(body);
          const response = await post({ ...body, summary: "something else" });
          expect(response).toMatchObject({ status: 422, body: { processed: false } });
          expect(response.body.message).toMatch(/different payload/);
        });

        it.each([
          ["not JSON", encode("{not json"), "body is not valid JSON"],
          ["a JSON array", encode("[1,2]"), "body must be a JSON object"],
          ["not UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), "body is not valid UTF-8"],
        ])("400 when the body is %s", async (_case, body, message) => {
          expect(await post(body)).toMatchObject({ status: 400, body: { processed: false, message } });
        });

        it("400 naming the failing field, never its value", async () => {
          const bad = notification("SUBSCRIPTION_RENEW", idFor("bad"));
          bad.resource.subscriber.email = "leaked-value-not-an-email";
          const response = await post(bad);
          expect(response.status).toBe(400);
          expect(response.body.message).toContain("resource.subscriber.email");
          expect(response.body.message).not.toContain("leaked-value");
        });

        it("405 with Allow: POST for GET", async () => {
          const response = await httpClient(url())({ method: "GET", headers: {} });
          expect(response).toMatchObject({ status: 405, body: { processed: false } });
          expect(response.headers.allow).toBe("POST");
        });

        it("415 for text/plain", async () => {
          const response = await post(notification("SUBSCRIPTION_RENEW", idFor("text")), { contentType: "text/plain" });
          expect(response).toMatchObject({ status: 415, body: { processed: false } });
        });

        it("413 for a declared Content-Length over bodyLimit, and for a stream passing it", async () => {
          const message = `body exceeds the limit of ${RUNTIME_LIMITS.bodyLimit} bytes`;
          const big = { ...notification("SUBSCRIPTION_RENEW", idFor("big")), pad: "x".repeat(5_000) };
          const bytes = bytesOf(big);
          const headers = { "content-type": "application/json", ...(await sign(bytes)) };
          const answer = { status: 413, body: { processed: false, message } };
          expect(await overSocket(url(), headers, bytes)).toMatchObject(answer);
          expect(await overSocket(url(), headers, bytes, true)).toMatchObject(answer);
        });

        it("408 when the body does not arrive within bodyTimeoutMs", async () => {
          const response = await post(notification("SUBSCRIPTION_RENEW", idFor("slow-body")), {
            streamed: true,
            neverEnds: true,
          });
          expect(response).toMatchObject({
            status: 408,
            body: { processed: false, message: "body not received in time" },
          });
        });

        it("500 without the error's words when the handler throws, then 200 on redelivery", async () => {
          const body = notification("SUBSCRIPTION_RENEW", idFor("fail-once"));
          const failed = await post(body);
          expect(failed).toMatchObject({ status: 500, body: { processed: false, message: "handler failed" } });
          expect(JSON.stringify(failed.body)).not.toContain("hunter2");
          expect(await post(body)).toMatchObject({ status: 200, body: { processed: true } });
          expect(await callsOf(body.id)).toBe(2);
        });

        it("500 when the handler outlives handlerTimeoutMs", async () => {
          const response = await post(notification("SUBSCRIPTION_RENEW", idFor("too-slow")));
          expect(response).toMatchObject({ status: 500, body: { processed: false, message: "handler timed out" } });
        });

        it("503 with Retry-After when the idempotency store is down", async () => {
          const response = await post(notification("SUBSCRIPTION_RENEW", idFor("store-down")));
          expect(response).toMatchObject({ status: 503, body: { processed: false } });
          expect(Number(response.headers["retry-after"])).toBeGreaterThanOrEqual(1);
        });

        if (mode !== "plain") {
          it("401 for a body changed after signing, and for a missing signature", async () => {
            const body = notification("SUBSCRIPTION_RENEW", idFor("tampered"));
            const answer = { status: 401, body: { processed: false, message: "signature verification failed" } };
            expect(await post({ ...body, summary: "tampered" }, { signed: bytesOf(body) })).toMatchObject(answer);
            expect(await post(body, { unsigned: true })).toMatchObject(answer);
            expect(await callsOf(body.id)).toBe(0);
          });
        }
      });
}

/**
 * POST over a bare socket, reading the answer even when the server answers and closes before taking
 * the whole body (workerd does, for a body over the limit, where fetch reports EPIPE instead).
 * `streamed`: chunked, with no Content-Length, and never finished.
 */
function overSocket(
  url: string,
  headers: Record<string, string>,
  body: Uint8Array,
  streamed = false,
): Promise<{ status: number; body: unknown }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    const answered = () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const payload = text.slice(text.indexOf("\r\n\r\n") + 4);
      // The JSON object, out of any chunked framing.
      const json = payload.slice(payload.indexOf("{"), payload.lastIndexOf("}") + 1);
      try {
        return { status, body: JSON.parse(json) as unknown };
      } catch {
        return undefined;
      }
    };
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8");
      const answer = answered();
      if (answer) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE" && err.code !== "ECONNRESET") reject(err);
    });
    socket.on("close", () => reject(new Error(`closed without a whole answer: ${text}`)));
    const framing = streamed ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) };
    const head = Object.entries({ ...headers, ...framing, host: `${hostname}:${port}` })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    socket.write(`POST ${pathname} HTTP/1.1\r\n${head}\r\n`);
    if (!streamed) {
      socket.write(body);
      return;
    }
    for (let offset = 0; offset < body.length; offset += 800) {
      const part = body.subarray(offset, offset + 800);
      socket.write(`${part.length.toString(16)}\r\n`);
      socket.write(part);
      socket.write("\r\n");
    }
  });
}
