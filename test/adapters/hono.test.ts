import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { hmacVerifier } from "merchant-webhooks";
import { type SubscriptionWebhookEnv, subscriptionWebhook } from "merchant-webhooks/hono";
import { signHmac } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { notification } from "../support/notifications.js";

const webhooks: { receiver: { close(): Promise<void> } }[] = [];
afterEach(async () => {
  await Promise.all(webhooks.splice(0).map((webhook) => webhook.receiver.close()));
});

function mounted(options: Parameters<typeof subscriptionWebhook>[0]) {
  const webhook = subscriptionWebhook({ logger: silentLogger(), ...options });
  webhooks.push(webhook);
  return webhook;
}

const post = (app: Hono<any>, body: string, headers: Record<string, string> = {}) =>
  app.request("/hook", { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

describe("merchant-webhooks/hono", () => {
  it("puts the accepted notification on the context, typed, for middleware around the webhook", async () => {
    const seen: (string | undefined)[] = [];
    const around = createMiddleware<SubscriptionWebhookEnv>(async (c, next) => {
      await next();
      // Typed: `c.var.notification` is a SubscriptionNotification, so `.resource.subscriber` compiles.
      seen.push(c.var.notification?.id, c.var.notification?.resource.subscriber?.email);
    });
    const onRenew = vi.fn();
    const app = new Hono<SubscriptionWebhookEnv>().post("/hook", around, mounted({ onRenew }));
    const body = notification();
    const response = await post(app, JSON.stringify(body));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ processed: true, message: "processed" });
    expect(seen).toEqual([body.id, body.resource.subscriber?.email]);
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("leaves the context without a notification when intake refuses the request", async () => {
    const seen: unknown[] = [];
    const app = new Hono<SubscriptionWebhookEnv>().post(
      "/hook",
      createMiddleware<SubscriptionWebhookEnv>(async (c, next) => {
        await next();
        seen.push(c.var.notification);
      }),
      mounted({ onRenew: vi.fn() }),
    );
    expect((await post(app, "{not json")).status).toBe(400);
    expect(seen).toEqual([undefined]);
  });

  it("500 naming the fix when a middleware before it read the body and a signature must be checked", async () => {
    const hmac = { secret: "a hono webhook secret of 32 bytes", header: "x-signature" };
    const onRenew = vi.fn();
    const app = new Hono()
      .use("/hook", async (c, next) => {
        await c.req.json();
        await next();
      })
      .post("/hook", mounted({ verify: hmacVerifier(hmac), onRenew }));
    const body = JSON.stringify(notification());
    const response = await post(app, body, await signHmac(new TextEncoder().encode(body), hmac));
    expect(response.status).toBe(500);
    expect((await response.json()).message).toContain("c.req.json()");
    expect(onRenew).not.toHaveBeenCalled();
  });
});
