import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import { eventually, freePort } from "../support/redis.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The value of the Prometheus sample `name{...}` whose labels include every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    if (Object.entries(labels).every(([key, value]) => match[2]!.includes(`${key}="${value}"`)))
      return Number(match[3]);
  }
  return undefined;
}

describe("examples/prometheus", () => {
  let child: ChildProcess;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ["--import", "tsx", "examples/prometheus/server.ts"], {
      cwd: root,
      env: { ...process.env, PORT: String(port) },
      stdio: "ignore",
    });
    await eventually(
      async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok,
      30_000,
      "the example to start",
    );
  }, 60_000);

  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it("serves the receiver's counters and histograms on /metrics after a few notifications", async () => {
    const post = (body: unknown) =>
      fetch(`${base}/webhooks/subscriptions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const renewal = notification("SUBSCRIPTION_RENEW");
    const statuses = [
      (await post(renewal)).status,
      (await post(notification("SUBSCRIPTION_CANCELLED"))).status,
      (await post(renewal)).status,
      (await post({ id: "broken" })).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 400]);

    const scrape = await fetch(`${base}/metrics`);
    expect(scrape.status).toBe(200);
    const text = await scrape.text();
    const counted = (outcome: string, eventType: string) =>
      sample(text, "webhook_notifications_total", {
        webhook_outcome: outcome,
        webhook_event_type: eventType,
        webhook_source: "receiver",
      });
    expect(counted("processed", "SUBSCRIPTION_RENEW")).toBe(1);
    expect(counted("processed", "SUBSCRIPTION_CANCELLED")).toBe(1);
    expect(counted("duplicate", "SUBSCRIPTION_RENEW")).toBe(1);
    expect(counted("invalid", "none")).toBe(1);
    expect(sample(text, "webhook_receive_duration_count", { webhook_outcome: "processed" })).toBe(2);
    expect(
      sample(text, "webhook_handler_duration_count", {
        webhook_outcome: "processed",
        webhook_event_type: "SUBSCRIPTION_CANCELLED",
      }),
    ).toBe(1);
  });
});
