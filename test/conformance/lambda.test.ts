import { subscriptionWebhook } from "merchant-webhooks/lambda";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { type LambdaEventFormat, lambdaClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

const FORMATS: [string, LambdaEventFormat][] = [
  ["API Gateway HTTP API (v2)", "http-api-v2"],
  ["API Gateway REST API (v1), base64 bodies", "rest-api-v1"],
  ["Lambda Function URL, base64 bodies", "function-url"],
];

for (const [name, format] of FORMATS) {
  runConformance(
    `Lambda, ${name}`,
    async (options) => {
      const handler = subscriptionWebhook(options);
      return { send: lambdaClient(handler, format), close: () => handler.receiver.close() };
    },
    { buffersBody: true },
  );
}

describe("Lambda event details", () => {
  const body = JSON.stringify(notification());

  it("joins a REST API event's repeated headers and reads the method from httpMethod", async () => {
    const seen: Record<string, string>[] = [];
    const handler = subscriptionWebhook({
      logger: silentLogger(),
      onRenew: (_n, ctx) => void seen.push({ ...ctx.headers }),
    });
    const result = await handler({
      httpMethod: "POST",
      headers: { "Content-Type": "application/json", "X-Trace": "b" },
      multiValueHeaders: { "Content-Type": ["application/json"], "X-Trace": ["a", "b"] },
      body,
      isBase64Encoded: false,
    });
    expect(result).toMatchObject({ statusCode: 200, isBase64Encoded: false });
    expect(JSON.parse(result.body)).toEqual({ processed: true, message: "processed" });
    expect(seen[0]).toMatchObject({ "content-type": "application/json", "x-trace": "a, b" });
  });

  it("answers 400 for a base64 body that does not decode, and 405 for a GET", async () => {
    const handler = subscriptionWebhook({ logger: silentLogger() });
    const broken = await handler({
      requestContext: { http: { method: "POST" } },
      headers: {},
      body: "not*base64!",
      isBase64Encoded: true,
    });
    expect(broken.statusCode).toBe(400);
    expect(JSON.parse(broken.body)).toEqual({ processed: false, message: "request body could not be read" });
    const get = await handler({ requestContext: { http: { method: "GET" } }, headers: {} });
    expect(get.statusCode).toBe(405);
  });

  it("answers 500 JSON, never a rejected promise, when reading the event itself fails", async () => {
    const handler = subscriptionWebhook({ logger: silentLogger() });
    const unreadable = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("a broken event");
        },
      },
    );
    const result = await handler({ requestContext: { http: { method: "POST" } }, headers: unreadable, body });
    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body)).toEqual({ processed: false, message: "internal error" });
  });
});
