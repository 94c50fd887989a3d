import { type INestApplication, Module, type Provider, type Type } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ExpressAdapter } from "@nestjs/platform-express";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { SubscriptionWebhookModule, type SubscriptionWebhookModuleOptions } from "merchant-webhooks/nest";

export type NestPlatform = "express" | "fastify";
export const NEST_PLATFORMS: NestPlatform[] = ["express", "fastify"];

export interface NestAppOptions {
  /** The module as the app imports it; default `SubscriptionWebhookModule.forRoot(webhook)`. */
  webhookModule?: ReturnType<typeof SubscriptionWebhookModule.forRoot>;
  webhook?: SubscriptionWebhookModuleOptions;
  providers?: Provider[];
  controllers?: Type[];
  /** The HTTP adapter to use instead of a fresh one for the platform. */
  adapter?: ExpressAdapter | FastifyAdapter;
}

/** A Nest app (not yet initialized) on `platform` importing the webhook module. */
export async function nestApp(platform: NestPlatform, options: NestAppOptions): Promise<INestApplication> {
  const webhookModule = options.webhookModule ?? SubscriptionWebhookModule.forRoot(options.webhook!);
  class AppModule {}
  Module({ imports: [webhookModule], providers: options.providers ?? [], controllers: options.controllers ?? [] })(
    AppModule,
  );
  const adapter = options.adapter ?? (platform === "express" ? new ExpressAdapter() : new FastifyAdapter());
  // abortOnError: false, so a boot error rejects here instead of aborting the test process.
  return NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false });
}

/** Listen on an ephemeral port; the URL of `path` on it. */
export async function listenNest(app: INestApplication, path = "/hook"): Promise<string> {
  await app.listen(0, "127.0.0.1");
  const url = (await app.getUrl()).replace("[::1]", "127.0.0.1");
  return `${url}${path}`;
}
