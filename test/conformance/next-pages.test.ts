import { createServer } from "node:http";
import * as nextEntry from "merchant-webhooks/next";
import { pagesSubscriptionWebhook } from "merchant-webhooks/next";
import { apiResolver } from "next/dist/server/api-utils/node/api-resolver.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";
import { httpClient, listen } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

/** What a Pages Router webhook route writes as a literal, as the README shows. */
const config = { api: { bodyParser: false } };

/** A Pages Router API route served by Next's own resolver, which applies the route's `config.api`. */
function pagesRoute(resolverModule: { default: unknown; config?: unknown }) {
  const apiContext = { previewModeId: "", previewModeEncryptionKey: "", previewModeSigningKey: "", dev: false };
  return createServer(
    (req, res) => void apiResolver(req, res, {}, resolverModule, apiContext, false, false, "/api/hook"),
  );
}

runConformance("Next.js Pages Router", async (options) => {
  const handler = pagesSubscriptionWebhook(options);
  const server = await listen(pagesRoute({ default: handler, config }));
  return {
    send: httpClient(server.url),
    close: async () => {
      await server.close();
      await handler.receiver.close();
    },
  };
});

it("does not export a route config: Next 16 fails the build when `config` is re-exported", () => {
  expect(Object.keys(nextEntry).sort()).toEqual(["pagesSubscriptionWebhook", "subscriptionWebhook"]);
});

describe("Next.js Pages Router with Next's body parser left on", () => {
  const servers: { close: () => Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function routeWithParserOn(options: Parameters<typeof pagesSubscriptionWebhook>[0]) {
    const server = await listen(
      pagesRoute({ default: pagesSubscriptionWebhook({ logger: silentLogger(), ...options }) }),
    );
    servers.push(server);
    return (body: unknown) =>
      fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
  }

  it("still handles unsigned notifications from the parsed body, once each", async () => {
    const onRenew = vi.fn();
    const post = await routeWithParserOn({ onRenew });
    const body = notification();
    expect((await post(body)).status).toBe(200);
    const again = await post(body);
    expect(await again.json()).toEqual({ processed: true, message: "already processed" });
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("answers a 500 naming the misconfiguration, not a hang, when a verifier needs the raw bytes", async () => {
    const onRenew = vi.fn();
    const post = await routeWithParserOn({ onRenew, verify: () => true });
    const response = await post(notification());
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      processed: false,
      message:
        "receiver misconfigured: a body parser consumed the raw body, so the signature cannot be checked; " +
        "turn Next's body parser off in this API route file: export const config = { api: { bodyParser: false } }",
    });
    expect(onRenew).not.toHaveBeenCalled();
  });
});
