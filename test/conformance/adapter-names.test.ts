import { createServer } from "node:http";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import * as express from "merchant-webhooks/express";
import * as fastify from "merchant-webhooks/fastify";
import * as fetchEntry from "merchant-webhooks/fetch";
import * as lambda from "merchant-webhooks/lambda";
import * as next from "merchant-webhooks/next";
import * as node from "merchant-webhooks/node";
import { listen } from "./clients.js";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

// Every adapter subpath answers to `subscriptionWebhook`; the names used before 0.1.0 stay as aliases
// of the very same function, so code written against them keeps working.

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
    ["express", express.subscriptionWebhook, express.subscriptionWebhook],
    ["fastify", fastify.subscriptionWebhook, fastify.subscriptionWebhookPlugin],
    ["next (App Router)", next.subscriptionWebhook, next.createRouteHandler],
    ["next (Pages Router)", next.pagesSubscriptionWebhook, next.createPagesHandler],
    ["node", node.subscriptionWebhook, node.createNodeHandler],
    ["fetch", fetchEntry.subscriptionWebhook, fetchEntry.createFetchHandler],
    ["lambda", lambda.subscriptionWebhook, lambda.createLambdaHandler],
  ] as const)("%s: the deprecated name is the same function", (_name, current, deprecated) => {
    expect(typeof current).toBe("function");
    expect(deprecated).toBe(current);
  });

  it.each([
    ["subscriptionWebhook", fetchEntry.subscriptionWebhook],
    ["createFetchHandler", fetchEntry.createFetchHandler],
  ])("fetch: %s answers a notification and runs its handler", async (_name, make) => {
    const { calls, options } = counting();
    const handle = make(options);
    closers.push(() => handle.receiver.close());
    const response = await handle(new Request("http://x/hook", { method: "POST", headers, body: body() }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ processed: true });
    expect(calls.renew).toBe(1);
  });

  it.each([
    ["subscriptionWebhook", next.subscriptionWebhook],
    ["createRouteHandler", next.createRouteHandler],
  ])("next App Router: `export const { POST } = %s(options)` answers", async (_name, make) => {
    const { calls, options } = counting();
    const { POST, receiver } = make(options);
    closers.push(() => receiver.close());
    const response = await POST(new Request("http://x/api/hook", { method: "POST", headers, body: body() }));
    expect(response.status).toBe(200);
    expect(calls.renew).toBe(1);
  });

  it.each([
    ["subscriptionWebhook", lambda.subscriptionWebhook],
    ["createLambdaHandler", lambda.createLambdaHandler],
  ])("lambda: %s answers an API Gateway event", async (_name, make) => {
    const { calls, options } = counting();
    const handler = make(options);
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
    ["subscriptionWebhook", node.subscriptionWebhook],
    ["createNodeHandler", node.createNodeHandler],
    ["pagesSubscriptionWebhook", next.pagesSubscriptionWebhook],
    ["createPagesHandler", next.createPagesHandler],
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

  it.each([
    ["subscriptionWebhook", fastify.subscriptionWebhook],
    ["subscriptionWebhookPlugin", fastify.subscriptionWebhookPlugin],
  ])("fastify: app.register(%s, { path }) answers", async (_name, plugin) => {
    const { calls, options } = counting();
    const app = Fastify({ logger: false });
    await app.register(plugin, { path: "/hook", ...options });
    closers.push(() => app.close());
    const response = await app.inject({ method: "POST", url: "/hook", headers, payload: body() });
    expect(response.statusCode).toBe(200);
    expect(calls.renew).toBe(1);
  });
});
