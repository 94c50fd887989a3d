import { hmacVerifier, standardWebhooksVerifier, subscriptionNotificationSchema } from "merchant-webhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RunningWebhook, runCli, startWebhook } from "./run-cli.js";

const SECRET = "whsec-cli-send-0123456789";

describe("merchant-webhooks send against a running server", () => {
  let webhook: RunningWebhook;
  const onRenew = vi.fn();
  const onCancel = vi.fn();
  beforeAll(async () => {
    webhook = await startWebhook({
      verify: hmacVerifier({ secret: SECRET, header: "x-signature" }),
      onRenew,
      onCancel,
    });
  });
  afterAll(() => webhook.close());

  it("sends one built notification with the fields set on the command line, and exits 0 when processed", async () => {
    const run = await runCli([
      "send",
      "renew",
      "--url",
      webhook.url,
      "--secret",
      SECRET,
      "--set",
      "resource.subscriber.email=a@b.co",
      "--set",
      "resource.renewal_event.payment_detail.amount.value=5.00",
      "--set",
      "resource.next_execution_time=1800000000000",
      "--set",
      'resource.renewal_event.payment_detail.metadata={"campaign":"spring"}',
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^WH-\w+ SUBSCRIPTION_RENEW: 200 \{"processed":true,"message":"processed"\}\n$/);
    const received = onRenew.mock.calls[0]![0];
    expect(received.id).toBe(run.stdout.split(" ")[0]);
    expect(received.resource.subscriber.email).toBe("a@b.co");
    expect(received.resource.renewal_event.payment_detail.amount).toEqual({ currency_code: "EUR", value: "5.00" });
    expect(received.resource.next_execution_time).toBe(1800000000000);
    expect(received.resource.renewal_event.payment_detail.metadata).toEqual({ campaign: "spring" });
  });

  it("uses a fresh id each time, so a second send is processed again rather than deduplicated", async () => {
    const runs = await Promise.all(
      [1, 2].map(() => runCli(["send", "SUBSCRIPTION_CANCELLED", "--url", webhook.url, "--secret", SECRET])),
    );
    expect(runs.map((run) => run.code)).toEqual([0, 0]);
    expect(onCancel).toHaveBeenCalledTimes(2);
    expect(onCancel.mock.calls[0]![0].id).not.toBe(onCancel.mock.calls[1]![0].id);
  });

  it("exits 1 with the answer when the server does not process it", async () => {
    const run = await runCli(["send", "renew", "--url", webhook.url, "--secret", "another-secret"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /SUBSCRIPTION_RENEW: 401 \{"processed":false,"message":"signature verification failed"\}/,
    );
  });

  it("signs with --scheme standard-webhooks, or in the header --signature-header names", async () => {
    const whsec = `whsec_${Buffer.from("cli standard webhooks key").toString("base64")}`;
    const onResume = vi.fn();
    const standard = await startWebhook({ verify: standardWebhooksVerifier(whsec), onResume });
    const custom = await startWebhook({
      verify: hmacVerifier({ secret: SECRET, header: "x-platform-signature" }),
      onResume,
    });
    try {
      const [standardRun, customRun, badSecret] = await Promise.all([
        runCli(["send", "resumed", "--url", standard.url, "--secret", whsec, "--scheme", "standard-webhooks"]),
        runCli([
          "send",
          "resumed",
          "--url",
          custom.url,
          "--secret",
          SECRET,
          "--signature-header",
          "x-platform-signature",
        ]),
        runCli(["send", "resumed", "--url", standard.url, "--secret", "not base64!", "--scheme", "standard-webhooks"]),
      ]);
      expect([standardRun.code, customRun.code]).toEqual([0, 0]);
      expect(onResume).toHaveBeenCalledTimes(2);
      expect(badSecret.code).toBe(2);
      expect(badSecret.stderr).toContain('must be "whsec_" followed by base64');
    } finally {
      await Promise.all([standard.close(), custom.close()]);
    }
  });

  it("prints the notification without sending it, valid against the schema", async () => {
    const run = await runCli(["send", "suspended", "--print", "--set", "resource.suspended_event.reason=card expired"]);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(subscriptionNotificationSchema.safeParse(printed).success).toBe(true);
    expect(printed.event_type).toBe("SUBSCRIPTION_SUSPENDED");
    expect(printed.resource.suspended_event.reason).toBe("card expired");
  });

  it("exits 2 for an event that is not one, or a --set that is not path=value or reaches a prototype", async () => {
    const [event, assignment, prototype] = await Promise.all([
      runCli(["send", "renw!", "--url", webhook.url]),
      runCli(["send", "renew", "--url", webhook.url, "--set", "resource.subscriber.email"]),
      runCli(["send", "renew", "--url", webhook.url, "--set", "resource.__proto__.polluted=1"]),
    ]);
    expect(event.code).toBe(2);
    expect(event.stderr).toContain('unknown event "renw!"');
    expect(assignment.code).toBe(2);
    expect(assignment.stderr).toContain("is not path=value");
    expect(prototype.code).toBe(2);
    expect(prototype.stderr).toContain('refusing the key "__proto__"');
  });
});
