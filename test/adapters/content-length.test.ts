import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { subscriptionWebhook as expressWebhook } from "merchant-webhooks/express";
import { subscriptionWebhook as fastifyWebhook } from "merchant-webhooks/fastify";
import { subscriptionWebhook as nodeWebhook } from "merchant-webhooks/node";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw HTTP/1.1 exchange, so the framing the server chose (length or chunks) is visible. */
function post(port: number, body: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { port, host: "127.0.0.1", path: "/hook", method: "POST", headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on("error", reject).end(body);
  });
}

const options = () => ({ logger: silentLogger(), onRenew: () => {} });
let closing: (() => Promise<unknown>) | undefined;
afterEach(async () => {
  await closing?.();
  closing = undefined;
});

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closing = () => new Promise((resolve) => server.close(resolve));
  return (server.address() as AddressInfo).port;
}

const mounts: [string, () => Promise<number>][] = [
  ["node", () => listening(createServer(nodeWebhook(options())))],
  [
    "express",
    () => {
      const app = express();
      app.post("/hook", expressWebhook(options()));
      return listening(createServer(app));
    },
  ],
  [
    "fastify",
    async () => {
      const app = Fastify();
      await app.register(fastifyWebhook, { path: "/hook", ...options() });
      await app.listen({ port: 0, host: "127.0.0.1" });
      closing = () => app.close();
      return (app.server.address() as AddressInfo).port;
    },
  ],
];

describe.each(mounts)("answers framed by their length on %s", (_name, mount) => {
  it("a shared answer (200 processed) and a per-request one (400 naming the field) carry a Content-Length of their bytes, never chunks", async () => {
    const port = await mount();
    const accepted = await post(port, JSON.stringify(notification()));
    const refused = await post(port, JSON.stringify({ ...notification(), event_type: 42 }));
    expect(accepted.status).toBe(200);
    expect(refused.status).toBe(400);
    for (const answer of [accepted, refused, await post(port, JSON.stringify(notification()))]) {
      expect(answer.headers["transfer-encoding"]).toBeUndefined();
      expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(answer.text)));
      expect(JSON.parse(answer.text)).toHaveProperty("processed");
    }
  });
});
