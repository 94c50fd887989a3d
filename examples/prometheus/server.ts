import { metrics } from "@opentelemetry/api";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import express from "express";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { pino } from "pino";

// The receiver's metrics for Prometheus: register an OpenTelemetry meter provider whose reader is the
// Prometheus exporter, and serve the exporter's text on GET /metrics of the same app. The library finds
// the provider through @opentelemetry/api; nothing is passed to it.
//   PORT=3000 npx tsx examples/prometheus/server.ts   then   curl localhost:3000/metrics
const exporter = new PrometheusExporter({ preventServerStart: true });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [exporter] }));

const logger = pino({ name: "merchant-webhooks-prometheus-example" });
const webhook = subscriptionWebhook({
  logger,
  onRenew: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access extended");
  },
  onCancel: async (notification, ctx) => {
    ctx.log.info({ subscription: notification.resource.id }, "access revoked");
  },
});

const app = express();
app.all("/webhooks/subscriptions", webhook);
app.get("/metrics", (req, res) => exporter.getMetricsRequestHandler(req, res));
app.get("/healthz", async (_req, res) => {
  const health = await webhook.receiver.health();
  res.status(health.ok ? 200 : 503).json(health);
});

const port = Number(process.env.PORT ?? 3000);
app.listen(port, () =>
  logger.info(`notifications on http://localhost:${port}/webhooks/subscriptions, metrics on /metrics`),
);
