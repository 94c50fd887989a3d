/**
 * NestJS (12, on @nestjs/platform-express or @nestjs/platform-fastify): `SubscriptionWebhookModule`
 * mounts the receiver on a path, reading that route's raw body itself, and runs the handlers that
 * providers declare with `@OnRenew()`, `@OnCancel()`, ... (found at boot, dependency injection
 * intact). The answers are the status table's, byte for byte what every adapter answers.
 *
 * @example
 * ```ts
 * import { Injectable, Module } from "@nestjs/common";
 * import { type NotificationOf, SubscriptionWebhookModule, OnRenew } from "merchant-webhooks/nest";
 *
 * @Injectable()
 * class Renewals {
 *   @OnRenew()
 *   async renew(notification: NotificationOf<"SUBSCRIPTION_RENEW">) {}
 * }
 *
 * @Module({ imports: [SubscriptionWebhookModule.forRoot({ path: "/webhooks/subscriptions" })], providers: [Renewals] })
 * class AppModule {}
 * ```
 *
 * @module
 */
import {
  type DynamicModule,
  type InjectionToken,
  Module,
  type ModuleMetadata,
  type OnModuleDestroy,
  type OnModuleInit,
  type OptionalFactoryDependency,
  type Provider,
} from "@nestjs/common";
import { DiscoveryModule, DiscoveryService, HttpAdapterHost } from "@nestjs/core";
import type { ConsoleHandler } from "../src/console/console-handler.js";
import { createReceiver, type Receiver } from "../src/receiver/create-receiver.js";
import { DEFAULT_BODY_LIMIT, type ReceiverOptions } from "../src/receiver/options.js";
import { MerchantWebhooksError } from "../src/shared/errors.js";
import { type DecoratedKey, decoratedHandlers } from "./nest/handler-decorators.js";
import { type MountedRoute, mountRoute, NEST_BODY_PARSER_FIX } from "./nest/mount-route.js";

export type { HandlerContext, NotificationOf } from "../src/dispatch/handlers.js";
export {
  type HandlerDecorator,
  OnAny,
  OnCancel,
  OnCreated,
  OnError,
  OnRenew,
  OnResume,
  OnSuspend,
  OnUnknown,
} from "./nest/handler-decorators.js";

/** `SubscriptionWebhookModule.forRoot(options)`: the receiver's options, where to mount it, the console. */
export interface SubscriptionWebhookModuleOptions extends ReceiverOptions {
  /**
   * The webhook's path on the HTTP server itself: Nest's global prefix does not apply, since the route
   * is mounted beneath Nest's router (before its body parsers).
   */
  path: string;
  /** `consoleHandler({ admin, authorize })` from merchant-webhooks/console, mounted under its `basePath`. */
  console?: ConsoleHandler;
}

/** `SubscriptionWebhookModule.forRootAsync(...)`: the options from a factory, with Nest's injection. */
export interface SubscriptionWebhookModuleAsyncOptions {
  imports?: ModuleMetadata["imports"];
  inject?: (InjectionToken | OptionalFactoryDependency)[];
  useFactory: (...args: any[]) => SubscriptionWebhookModuleOptions | Promise<SubscriptionWebhookModuleOptions>;
}

/** The token of the module's options (what `forRoot` was given, or `forRootAsync`'s factory returned). */
export const SUBSCRIPTION_WEBHOOK_OPTIONS = Symbol.for("merchant-webhooks.nest.options");

/**
 * Inject it (`@Inject(SubscriptionWebhook)`) for the receiver behind the route: `receiver.health()`
 * for a health check. Its receiver exists from `app.init()` on.
 */
export class SubscriptionWebhook implements OnModuleInit, OnModuleDestroy {
  #receiver: Receiver | undefined;
  readonly #route: MountedRoute;

  constructor(
    private readonly options: SubscriptionWebhookModuleOptions,
    adapterHost: HttpAdapterHost,
    private readonly discovery: DiscoveryService,
  ) {
    const adapter = adapterHost.httpAdapter;
    if (!adapter)
      throw new MerchantWebhooksError(
        "MW_NEST_PLATFORM",
        "SubscriptionWebhookModule needs an HTTP application (NestFactory.create), not a standalone context",
      );
    const route = { path: options.path, bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT, console: options.console };
    this.#route = mountRoute(adapter, route, () => this.receiver);
  }

  /** The receiver behind the route; `MW_NEST_NOT_STARTED` before `app.init()` made it. */
  get receiver(): Receiver {
    if (!this.#receiver)
      throw new MerchantWebhooksError(
        "MW_NEST_NOT_STARTED",
        "the webhook's receiver is made at app.init() (or app.listen()), once every provider exists",
      );
    return this.#receiver;
  }

  /** Nest's parsers are in place and every provider exists: check the one, find the handlers on the other. */
  onModuleInit(): void {
    this.#route.checkBodyParsers();
    const { path: _path, console: _console, ...receiverOptions } = this.options;
    const given: Partial<Record<DecoratedKey, unknown>> = {};
    for (const key of HANDLER_OPTION_KEYS) given[key] = receiverOptions[key];
    const providers = this.discovery
      .getProviders()
      .filter((wrapper) => wrapper.isDependencyTreeStatic() && isObject(wrapper.instance) && wrapper.instance !== this)
      .map((wrapper) => ({ instance: wrapper.instance as object, name: String(wrapper.name) }));
    this.#receiver = createReceiver(
      { ...receiverOptions, ...decoratedHandlers(providers, given) },
      { bodyParserFix: NEST_BODY_PARSER_FIX },
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.#receiver?.close();
  }
}

const HANDLER_OPTION_KEYS: readonly DecoratedKey[] = [
  "onCreated",
  "onRenew",
  "onCancel",
  "onSuspend",
  "onResume",
  "onUnknown",
  "onAny",
  "onError",
];

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;

/**
 * `imports: [SubscriptionWebhookModule.forRoot({ path: "/webhooks/subscriptions", idempotency })]`: the
 * route on the app's HTTP server (Express or Fastify), its handlers found on providers at boot. A second
 * handler for one event, or a body parser before the route, fails `app.init()` with an `MW_` code.
 */
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest module is a class; forRoot and forRootAsync are Nest's convention
export class SubscriptionWebhookModule {
  static forRoot(options: SubscriptionWebhookModuleOptions): DynamicModule {
    return withOptions({ provide: SUBSCRIPTION_WEBHOOK_OPTIONS, useValue: options });
  }

  /** `forRootAsync({ imports: [ConfigModule], inject: [ConfigService], useFactory: (config) => ({ ... }) })`. */
  static forRootAsync(options: SubscriptionWebhookModuleAsyncOptions): DynamicModule {
    return withOptions(
      { provide: SUBSCRIPTION_WEBHOOK_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
      options.imports,
    );
  }
}
// Applied as a call, not as `@Module()`: the package is built without decorator support.
Module({})(SubscriptionWebhookModule);

function withOptions(optionsProvider: Provider, imports: ModuleMetadata["imports"] = []): DynamicModule {
  return {
    module: SubscriptionWebhookModule,
    imports: [DiscoveryModule, ...imports],
    providers: [
      optionsProvider,
      {
        provide: SubscriptionWebhook,
        useFactory: (options: SubscriptionWebhookModuleOptions, host: HttpAdapterHost, discovery: DiscoveryService) =>
          new SubscriptionWebhook(options, host, discovery),
        inject: [SUBSCRIPTION_WEBHOOK_OPTIONS, HttpAdapterHost, DiscoveryService],
      },
    ],
    exports: [SubscriptionWebhook],
  };
}
