import { createServer, type Server } from "node:http";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { memoryStore } from "merchant-webhooks";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import { serveConsole as expressConsole } from "merchant-webhooks/express";
import { serveConsole as fastifyConsole } from "merchant-webhooks/fastify";
import { serveConsole as honoConsole } from "merchant-webhooks/hono";
import { serveConsole as nodeConsole } from "merchant-webhooks/node";
import { afterAll, describe, expect, it } from "vitest";

const admin = createAdmin({ idempotency: memoryStore() });
const handler = consoleHandler({
  admin,
  basePath: "/ops/console",
  authorize: (request) => request.headers.get("authorization") === "Bearer ops",
});

const servers: Array<{ close(): unknown }> = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

async function listen(server: Server): Promise<string> {
  servers.push({ close: () => new Promise((resolve) => server.close(resolve)) });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** The console behind `origin`: its overview for the authorized, 401 for others, its asset, and a path beside it. */
async function checkMount(
  origin: string,
  beside: number,
  fetch: (url: string, init?: RequestInit) => Promise<Response> = globalThis.fetch,
) {
  const ok = await fetch(`${origin}/ops/console/`, { headers: { authorization: "Bearer ops" } });
  expect(ok.status).toBe(200);
  expect(ok.headers.get("content-security-policy")).toContain("script-src 'self'");
  expect(await ok.text()).toContain("<h1>Overview</h1>");
  expect((await fetch(`${origin}/ops/console/notifications`)).status).toBe(401);
  const script = await fetch(`${origin}/ops/console/assets/console.js`, { headers: { authorization: "Bearer ops" } });
  expect(script.headers.get("content-type")).toContain("javascript");
  // Read-only without a durable queue: a POST is refused, and no token is handed out.
  const post = await fetch(`${origin}/ops/console/actions/replay`, {
    method: "POST",
    headers: { authorization: "Bearer ops", "content-type": "application/x-www-form-urlencoded" },
    body: "id=x",
  });
  expect(post.status).toBe(403);
  expect((await fetch(`${origin}/elsewhere`)).status).toBe(beside);
}

describe("mounting the console", () => {
  it("on node:http", async () => {
    await checkMount(await listen(createServer(nodeConsole(handler))), 404);
  });

  it("in Express, passing other paths on", async () => {
    const app = express();
    app.use(expressConsole(handler));
    app.get("/elsewhere", (_req, res) => {
      res.status(204).end();
    });
    await checkMount(await listen(createServer(app)), 204);
  });

  it("in Fastify", async () => {
    const app = Fastify();
    await app.register(fastifyConsole, { handler });
    app.get("/elsewhere", async (_req, reply) => reply.code(204).send());
    servers.push({ close: () => app.close() });
    await checkMount(await app.listen({ port: 0, host: "127.0.0.1" }), 204);
  });

  it("in Hono with app.route, beside the app's own routes", async () => {
    const app = new Hono();
    app.route("/", honoConsole(handler));
    app.get("/elsewhere", (c) => c.body(null, 204));
    await checkMount("http://hono.test", 204, async (url, init) => app.request(url, init));
  });

  it("as a fetch handler (Hono, Bun, Deno, Workers, Next's App Router) with nothing in between", async () => {
    const response = await handler(new Request("http://x/ops/console/", { headers: { authorization: "Bearer ops" } }));
    expect(response.status).toBe(200);
    expect((await handler(new Request("http://x/other"))).status).toBe(404);
  });
});
