import type { INestApplication } from "@nestjs/common";
import { Body, Controller, Inject, Injectable, Module, Post } from "@nestjs/common";
import { ExpressAdapter } from "@nestjs/platform-express";
import express from "express";
import { hmacVerifier, memoryStore } from "merchant-webhooks";
import { consoleHandler, createAdmin } from "merchant-webhooks/console";
import {
  type HandlerContext,
  type NotificationOf,
  OnCancel,
  OnRenew,
  SubscriptionWebhook,
  SubscriptionWebhookModule,
} from "merchant-webhooks/nest";
import { signHmac } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { listenNest, NEST_PLATFORMS, nestApp } from "../support/nest-app.js";
import { notification } from "../support/notifications.js";

const apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** A dependency of the handler provider, injected by its token. */
class AccessLedger {
  readonly extended: string[] = [];
  extend(subscriptionId: string) {
    this.extended.push(subscriptionId);
  }
}

@Injectable()
class Renewals {
  constructor(@Inject(AccessLedger) private readonly ledger: AccessLedger) {}

  @OnRenew()
  async renew(notification: NotificationOf<"SUBSCRIPTION_RENEW">, ctx: HandlerContext) {
    expect(ctx.eventType).toBe("SUBSCRIPTION_RENEW");
    this.ledger.extend(notification.id);
  }
}

@Injectable()
class SecondRenewals {
  @OnRenew()
  async renewAgain(_notification: NotificationOf<"SUBSCRIPTION_RENEW">) {}
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

async function started(app: INestApplication) {
  apps.push(app);
  return listenNest(app);
}

describe.each(NEST_PLATFORMS)("SubscriptionWebhookModule on platform-%s", (platform) => {
  it("runs a decorated handler with its injected dependency, once per id", async () => {
    const ledger = new AccessLedger();
    const app = await nestApp(platform, {
      webhook: { path: "/hook", logger: silentLogger() },
      providers: [{ provide: AccessLedger, useValue: ledger }, Renewals],
    });
    const url = await started(app);
    const body = notification("SUBSCRIPTION_RENEW");
    const text = JSON.stringify(body);
    const answers = await Promise.all([post(url, text), post(url, text)]);
    const again = await post(url, text);
    expect(answers.map((answer) => answer.status)).toContain(200);
    expect(await again.json()).toEqual({ processed: true, message: "already processed" });
    expect(ledger.extended).toEqual([body.id]);
    // No handler declared for cancellations: the table's "no handler" answer, not a 404 or a crash.
    const cancel = await post(url, JSON.stringify(notification("SUBSCRIPTION_CANCELLED")));
    expect(await cancel.json()).toEqual({ processed: true, message: expect.stringMatching(/^no handler/) });
  });

  it("fails the boot with MW_NEST_DUPLICATE_HANDLER for a second handler of one event", async () => {
    const app = await nestApp(platform, {
      webhook: { path: "/hook", logger: silentLogger() },
      providers: [{ provide: AccessLedger, useValue: new AccessLedger() }, Renewals, SecondRenewals],
    });
    apps.push(app);
    const boot = app.init();
    await expect(boot).rejects.toMatchObject({ code: "MW_NEST_DUPLICATE_HANDLER" });
    await expect(boot).rejects.toThrow(/Renewals\.renew and SecondRenewals\.renewAgain/);
  });

  it("counts a handler given in the options against a decorated one", async () => {
    const app = await nestApp(platform, {
      webhook: { path: "/hook", logger: silentLogger(), onRenew: () => {} },
      providers: [SecondRenewals],
    });
    apps.push(app);
    await expect(app.init()).rejects.toMatchObject({
      code: "MW_NEST_DUPLICATE_HANDLER",
      message: expect.stringContaining("the module's options and SecondRenewals.renewAgain"),
    });
  });

  it("forRootAsync: options from a factory with injected providers, verifying signatures", async () => {
    const hmac = { secret: "a nest webhook secret, 32 bytes long", header: "x-signature" };
    class Settings {
      readonly secret = hmac.secret;
    }
    class SettingsModule {}
    Module({ providers: [Settings], exports: [Settings] })(SettingsModule);
    const cancelled: string[] = [];
    @Injectable()
    class Cancellations {
      @OnCancel()
      cancel(notification: NotificationOf<"SUBSCRIPTION_CANCELLED">) {
        cancelled.push(notification.id);
      }
    }
    const app = await nestApp(platform, {
      webhookModule: SubscriptionWebhookModule.forRootAsync({
        imports: [SettingsModule],
        inject: [Settings],
        useFactory: async (settings: Settings) => ({
          path: "/hook",
          logger: silentLogger(),
          verify: hmacVerifier({ secret: settings.secret, header: hmac.header }),
        }),
      }),
      providers: [Cancellations],
    });
    const url = await started(app);
    const body = JSON.stringify(notification("SUBSCRIPTION_CANCELLED"));
    const unsigned = await post(url, body);
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toEqual({ processed: false, message: "signature verification failed" });
    const signed = await post(url, body, await signHmac(new TextEncoder().encode(body), hmac));
    expect(signed.status).toBe(200);
    expect(cancelled).toHaveLength(1);
    // The receiver is reachable for health checks through the exported provider.
    expect(await app.get(SubscriptionWebhook).receiver.health()).toMatchObject({ ok: true });
  });

  it("mounts the console through the same module, beside the app's JSON routes", async () => {
    const idempotency = memoryStore();
    const handler = consoleHandler({
      admin: createAdmin({ idempotency }),
      basePath: "/ops/console",
      authorize: (request) => request.headers.get("authorization") === "Bearer ops",
    });
    const app = await nestApp(platform, {
      webhook: { path: "/hook", idempotency, logger: silentLogger(), console: handler },
    });
    const url = await started(app);
    const origin = new URL(url).origin;
    const page = await fetch(`${origin}/ops/console/`, { headers: { authorization: "Bearer ops" } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<h1>Overview</h1>");
    expect((await fetch(`${origin}/ops/console/`)).status).toBe(401);
  });
});

describe("SubscriptionWebhookModule behind a global body parser", () => {
  it("fails the boot with MW_NEST_BODY_PARSER instead of answering 401 to every signed notification", async () => {
    const server = express();
    server.use(express.json());
    const app = await nestApp("express", {
      adapter: new ExpressAdapter(server),
      webhook: {
        path: "/hook",
        logger: silentLogger(),
        verify: hmacVerifier({ secret: "a nest webhook secret, 32 bytes long", header: "x-signature" }),
      },
    });
    apps.push(app);
    const boot = app.init();
    await expect(boot).rejects.toMatchObject({ code: "MW_NEST_BODY_PARSER" });
    await expect(boot).rejects.toThrow(/jsonParser/);
  });

  it("boots with Nest's own parsers, and the app's JSON routes keep them", async () => {
    @Controller()
    class Echo {
      @Post("echo")
      echo(@Body() body: unknown) {
        return body;
      }
    }
    const app = await nestApp("express", { webhook: { path: "/hook", logger: silentLogger() }, controllers: [Echo] });
    const url = await started(app);
    const echoed = await post(url.replace("/hook", "/echo"), JSON.stringify({ a: 1 }));
    expect(await echoed.json()).toEqual({ a: 1 });
  });
});

// Nest's own JSON parser never reaches the route on Fastify (the conformance suite runs with it on): the
// route's context replaces every content-type parser. A root hook that drains the stream still can.
describe("SubscriptionWebhookModule on platform-fastify beside a root hook", () => {
  const hmac = { secret: "a nest webhook secret, 32 bytes long", header: "x-signature" };
  const verify = () => hmacVerifier(hmac);
  const signed = async (body: string) => signHmac(new TextEncoder().encode(body), hmac);

  it("answers a body a root hook consumed as not processed, naming the fix, and keeps serving", async () => {
    const { FastifyAdapter } = await import("@nestjs/platform-fastify");
    const adapter = new FastifyAdapter();
    // A raw-body capture that drains the request stream itself and hands Fastify nothing new.
    adapter.getInstance().addHook("preParsing", async (request) => {
      for await (const _chunk of request.raw) {
        // drained
      }
    });
    const app = await nestApp("fastify", {
      adapter,
      webhook: { path: "/hook", logger: silentLogger(), verify: verify() },
    });
    const url = await started(app);
    const body = JSON.stringify(notification("SUBSCRIPTION_RENEW", "WH-NEST-FASTIFY-2"));
    const answer = await post(url, body, await signed(body));
    expect(answer.status).toBe(500);
    const answered = (await answer.json()) as { processed: boolean; message: string };
    expect(answered.processed).toBe(false);
    expect(answered.message).toContain("a body parser consumed the raw body");
    const again = await post(url, body, await signed(body));
    expect(again.status).toBe(answer.status);
  });
});
