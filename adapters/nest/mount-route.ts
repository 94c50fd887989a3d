// Mounting the webhook route (and the console) on the HTTP server under a Nest app, before Nest adds
// its own body parsers, so the route reads its raw body itself: Express's parsers are app-wide
// middleware that Nest adds at app.init(), after the providers are made; Fastify's content-type
// parsers are replaced inside an encapsulated context.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import type { ConsoleHandler } from "../../src/console/console-handler.js";
import type { Receiver } from "../../src/receiver/create-receiver.js";
import { MerchantWebhooksError } from "../../src/shared/errors.js";
import { serveConsole as expressConsole } from "../express.js";
import { serveConsole as fastifyConsole } from "../fastify.js";
import { routeWebhook } from "../http/fastify-route.js";
import { nodeListener } from "../http/node-listener.js";

/** What the module needs of Nest's HTTP adapter (`HttpAdapterHost.httpAdapter`). */
export interface NestHttpAdapter {
  getType(): string;
  getInstance(): unknown;
}

export interface NestRoute {
  path: string;
  bodyLimit: number;
  console?: ConsoleHandler | undefined;
}

export interface MountedRoute {
  /** Throws `MW_NEST_BODY_PARSER` when a body parser runs before the route; called once Nest has added its own. */
  checkBodyParsers(): void;
}

/** Named in the misconfiguration answer and the boot error. */
export const NEST_BODY_PARSER_FIX =
  "mount no body parser before SubscriptionWebhookModule's route (Nest's own, added at app.init(), comes after it)";

/** Mount the route on the platform under `adapter`; `receiverOf` gives the receiver at request time. */
export function mountRoute(adapter: NestHttpAdapter, route: NestRoute, receiverOf: () => Receiver): MountedRoute {
  const type = adapter.getType();
  if (type === "express") return mountOnExpress(adapter.getInstance() as ExpressApp, route, receiverOf);
  if (type === "fastify") return mountOnFastify(adapter.getInstance() as FastifyInstance, route, receiverOf);
  throw new MerchantWebhooksError(
    "MW_NEST_PLATFORM",
    `SubscriptionWebhookModule mounts on @nestjs/platform-express or @nestjs/platform-fastify; this app's HTTP adapter is ${JSON.stringify(type)}`,
  );
}

type Listener = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

interface ExpressLayer {
  name?: string;
  handle?: { name?: string };
  route?: { path?: unknown; stack?: { handle?: unknown }[] };
}

/** Express 4 and 5, as far as mounting goes. */
interface ExpressApp {
  all(path: string, handler: Listener): unknown;
  use(handler: Listener): unknown;
  router?: { stack?: ExpressLayer[] };
  _router?: { stack?: ExpressLayer[] };
}

// body-parser's middleware names (express.json(), .urlencoded(), .raw(), .text(), and Nest's own).
const BODY_PARSERS = new Set(["jsonParser", "urlencodedParser", "rawParser", "textParser"]);

function mountOnExpress(app: ExpressApp, route: NestRoute, receiverOf: () => Receiver): MountedRoute {
  let listener: ReturnType<typeof nodeListener> | undefined;
  const handle: Listener = (req, res) => {
    listener ??= nodeListener(receiverOf());
    void listener(req, res);
  };
  app.all(route.path, handle);
  if (route.console) app.use(expressConsole(route.console) as Listener);
  return {
    checkBodyParsers() {
      const stack = (app.router ?? app._router)?.stack ?? [];
      const ours = stack.findIndex((layer) => layer.route?.stack?.some((entry) => entry.handle === handle));
      const parser = stack.findIndex((layer) => BODY_PARSERS.has(layer.handle?.name ?? layer.name ?? ""));
      if (parser >= 0 && parser < ours)
        throw new MerchantWebhooksError(
          "MW_NEST_BODY_PARSER",
          `a body parser (${stack[parser]!.handle?.name ?? stack[parser]!.name}) runs before the webhook route ${route.path} and would consume its body, so its signature could not be checked; ${NEST_BODY_PARSER_FIX}`,
        );
    },
  };
}

function mountOnFastify(app: FastifyInstance, route: NestRoute, receiverOf: () => Receiver): MountedRoute {
  // Not wrapped in fastify-plugin, on purpose: the route's raw-body parser stays inside this context.
  void app.register(async (scope) => {
    routeWebhook(scope, { path: route.path, bodyLimit: route.bodyLimit, closeWithApp: false }, receiverOf);
  });
  if (route.console) void app.register(fastifyConsole, { handler: route.console });
  // Fastify's parsers are per content type and per context: none of the app's reaches the route.
  return { checkBodyParsers() {} };
}
