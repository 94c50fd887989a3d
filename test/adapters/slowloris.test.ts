import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import express from "express";
import Fastify from "fastify";
import type { ReceiverOptions } from "merchant-webhooks";
import { subscriptionWebhook as expressWebhook } from "merchant-webhooks/express";
import { subscriptionWebhook as fastifyWebhook } from "merchant-webhooks/fastify";
import { subscriptionWebhook as nodeWebhook } from "merchant-webhooks/node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { listen } from "../conformance/clients.js";
import { silentLogger } from "../support/capture-logger.js";

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Start an adapter on an ephemeral port; resolves to its host and port. */
type Start = (options: ReceiverOptions) => Promise<{ port: number }>;

const portOf = (url: string) => Number(new URL(url).port);

async function nodeServer(listener: Parameters<typeof createServer>[1]): Promise<{ port: number }> {
  const server: Server = createServer(listener);
  const { url, close } = await listen(server);
  closers.push(close);
  return { port: portOf(url) };
}

const ADAPTERS: Array<[string, Start]> = [
  ["Node http", (options) => nodeServer(nodeWebhook(options))],
  [
    "Express",
    (options) => {
      const app = express();
      app.all("/hook", expressWebhook(options));
      return nodeServer(app);
    },
  ],
  [
    "Fastify",
    async (options) => {
      const app = Fastify();
      await app.register(fastifyWebhook, { path: "/hook", ...options });
      const address = await app.listen({ port: 0, host: "127.0.0.1" });
      closers.push(() => app.close());
      return { port: portOf(address) };
    },
  ],
];

/**
 * A sender that declares a body, sends one byte of it and then nothing (slowloris). Resolves with all
 * the server wrote, once the server closes the connection.
 */
function trickle(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(
        "POST /hook HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{",
      );
    });
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
  });
}

describe("a body trickled slower than bodyTimeoutMs (slowloris)", () => {
  it.each(ADAPTERS)("%s answers 408 processed:false and closes the connection", async (_name, start) => {
    const onRenew = vi.fn();
    const { port } = await start({ logger: silentLogger(), onRenew, bodyTimeoutMs: 200 });
    const written = await trickle(port);
    expect(written).toMatch(/^HTTP\/1\.1 408 /);
    expect(written.toLowerCase()).toContain("connection: close");
    // The body may come chunked: the JSON is what lies between its braces.
    expect(JSON.parse(/\{.*\}/s.exec(written.slice(written.indexOf("\r\n\r\n")))![0])).toEqual({
      processed: false,
      message: "body not received in time",
    });
    expect(onRenew).not.toHaveBeenCalled();
  });
});
