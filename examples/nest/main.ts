import "reflect-metadata";
import { Inject, Injectable, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import {
  type HandlerContext,
  type NotificationOf,
  OnCancel,
  OnRenew,
  SubscriptionWebhookModule,
} from "merchant-webhooks/nest";

// `npx tsx examples/nest/main.ts` (Express), or with NEST_PLATFORM=fastify. POST notifications to
// /webhooks/subscriptions; GET /access/:subscription shows what the handlers did.

/** Stands for your own service: the handlers get it by injection. */
class AccessService {
  readonly granted = new Map<string, "active" | "revoked">();
}

@Injectable()
class SubscriptionHandlers {
  constructor(@Inject(AccessService) private readonly access: AccessService) {}

  @OnRenew()
  renew(notification: NotificationOf<"SUBSCRIPTION_RENEW">, ctx: HandlerContext) {
    this.access.granted.set(notification.resource.id ?? notification.id, "active");
    ctx.log.info({ subscription: notification.resource.id }, "access extended");
  }

  @OnCancel()
  cancel(notification: NotificationOf<"SUBSCRIPTION_CANCELLED">) {
    this.access.granted.set(notification.resource.id ?? notification.id, "revoked");
  }
}

@Module({
  imports: [SubscriptionWebhookModule.forRoot({ path: "/webhooks/subscriptions" })],
  providers: [{ provide: AccessService, useValue: new AccessService() }, SubscriptionHandlers],
})
class AppModule {}

const app =
  process.env.NEST_PLATFORM === "fastify"
    ? await NestFactory.create(AppModule, new FastifyAdapter())
    : await NestFactory.create(AppModule);
const access = app.get(AccessService);
const server = app.getHttpAdapter();
server.get("/access/:subscription", (req: { params: { subscription: string } }, res: unknown) =>
  server.reply(res, { state: access.granted.get(req.params.subscription) ?? "unknown" }, 200),
);
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
