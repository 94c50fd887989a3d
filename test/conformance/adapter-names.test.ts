import { createServer } from "node:http";
import Fastify from "fastify";
import * as express from "merchant-webhooks/express";
import * as fastify from "merchant-webhooks/fastify";
import * as fetchEntry from "merchant-webhooks/fetch";
import * as hono from "merchant-webhooks/hono";
import * as lambda from "merchant-webhooks/lambda";
import * as next from "merchant-webhooks/next";
import * as node from "merchant-webhooks/node";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { listen } from "./clients.js";

// Every adapter subpath answers to `subscriptionWebhook` (Next also `pagesSubscriptionWebhook`), and each
// answers a notification mounted the way its framework mounts it.

const OLD_NAMES = [
  "subscriptionWebhookPlugin",
  "createRouteHandler",
  "createPagesHandler",
  "createNodeHandler",
  "createFetchHandler",
  "createLambdaHandler",
];

const headers = { "content-type": "application/json" };
const body = () => JSON.stringify(notification("SUBSCRIPTION_RENEW", `names-${process.pid}-${Math.random()}`));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function counting() {
  const calls = { renew: 0 };
  return { calls, options: { logger: silentLogger(), onRenew: () => void calls.renew++ } };
}

describe("one adapter name on every subpath", () => {
  it.each([
    ["express", express],
    ["fastify", fastify],
    ["next", next],
    ["node", node],
    ["fetch", fetchEntry],
    ["lambda", lambda],
    ["hono", hono],
  ] as const)("%s: exports subscriptionWebhook and none of the names used before 0.1.0", (_name, entry) => {
    expect(typeof entry.subscriptionWebhook).toBe("function");
    for (const old of OLD_NAMES) expect(entry).not.toHaveProperty(old);
  });

  it("fetch: subscriptionWebhook answers a notification and runs its handler", async () => {
    const { calls, options } = counting();
    const handle = fetchEntry.subscriptionWebhook(options);
    closers.push(() => handle.receiver.close());
    const response = await handle(new Request("http://x/hook", { method: "POST", headers, body: body() }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ processed: true });
    expect(calls.renew).toBe(1);
  });

  it("next App Router: `export const { POST } = subscriptionWebhook(options)` answers", async () => {
    const { calls, options } = counting();
    const { POST, receiver } = next.subscriptionWebhook(options);
    closers.push(() => receiver.close());
    const response = await POST(new Request("http://x/api/hook", { method: "POST", headers, body: body() }));
    expect(response.status).toBe(200);
    expect(calls.renew).toBe(1);
  });

  it("lambda: subscriptionWebhook answers an API Gateway event", async () => {
    const { calls, options } = counting();
    const handler = lambda.subscriptionWebhook(options);
    closers.push(() => handler.receiver.close());
    const result = await handler({
      version: "2.0",
      headers: { "content-type": "application/json" },
      requestContext: { http: { method: "POST" } },
      body: body(),
      isBase64Encoded: false,
    });
    expect(result.statusCode).toBe(200);
    expect(calls.renew).toBe(1);
  });

  it.each([
    ["node subscriptionWebhook", node.subscriptionWebhook],
    ["next pagesSubscriptionWebhook", next.pagesSubscriptionWebhook],
    ["express subscriptionWebhook", express.subscriptionWebhook as unknown as typeof node.subscriptionWebhook],
  ])("node-style (req, res): %s answers over HTTP", async (_name, make) => {
    const { calls, options } = counting();
    const handler = make(options);
    const server = await listen(createServer((req, res) => void handler(req, res)));
    closers.push(async () => {
      await server.close();
      await handler.receiver.close();
    });
    const response = await fetch(server.url, { method: "POST", headers, body: body() });
    expect(response.status).toBe(200);
    expect(calls.renew).toBe(1);
  });

  it("fastify: app.register(subscriptionWebhook, { path }) answers", async () => {
    const { calls, options } = counting();
    const app = Fastify({ logger: false });
    await app.register(fastify.subscriptionWebhook, { path: "/hook", ...options });
    closers.push(() => app.close());
    const response = await app.inject({ method: "POST", url: "/hook", headers, payload: body() });
    expect(response.statusCode).toBe(200);
    expect(calls.renew).toBe(1);
  });
});
