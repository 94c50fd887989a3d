import { createReceiver, hmacVerifier, memoryStore, type ReceiverOptions } from "merchant-webhooks";
import { buildNotification, signHmac } from "merchant-webhooks/testing";
import { describe, expect, it, vi } from "vitest";
import { captureLogger } from "../support/capture-logger.js";

/** Two tenants, each with its own secret and its own merchant. */
const SECRETS: Record<string, string> = {
  tenantA: "tenant-a-secret-0123456789abcdef0123456789",
  tenantB: "tenant-b-secret-0123456789abcdef0123456789",
};
const MERCHANT_OF: Record<string, string> = { tenantA: "M-A", tenantB: "M-B" };

const verify = hmacVerifier({ header: "x-signature", secret: (headers) => SECRETS[headers["x-tenant"] ?? ""] ?? [] });

async function signedBy(tenant: string, notification: unknown) {
  const rawBody = new TextEncoder().encode(JSON.stringify(notification));
  const signature = await signHmac(rawBody, { secret: SECRETS[tenant]!, header: "x-signature" });
  return {
    method: "POST",
    headers: { "content-type": "application/json", "x-tenant": tenant, ...signature },
    rawBody,
  };
}

const event = (type: "SUBSCRIPTION_RENEW" | "SUBSCRIPTION_CANCELLED", id: string, updateTime: string) =>
  buildNotification(type, { id, resource: { merchant_id: "M-B", id: "SUB-B-1", update_time: updateTime } });

function receiver(options: Partial<ReceiverOptions>) {
  const { logger, lines } = captureLogger();
  return {
    lines,
    receiver: createReceiver({ logger, idempotency: memoryStore(), verify, ordering: true, ...options }),
  };
}

describe("a tenant signing, with its own secret, a body carrying another tenant's merchant", () => {
  it("without authorizeSender: runs the other tenant's handler and spoils its id and ordering (what the check is for)", async () => {
    const onRenew = vi.fn();
    const onCancel = vi.fn();
    const { receiver: r } = receiver({ onRenew, onCancel });
    const forged = await r.handle(
      await signedBy("tenantA", event("SUBSCRIPTION_RENEW", "EVT-B-7", "2026-03-01T12:00:00Z")),
    );
    expect(forged.status).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
    const real = await r.handle(
      await signedBy("tenantB", event("SUBSCRIPTION_RENEW", "EVT-B-7", "2026-03-01T10:00:00Z")),
    );
    expect(real.status).toBe(422);
    await r.close();
  });

  it("with authorizeSender: answered 403 processed false, nothing claimed, B's own deliveries run", async () => {
    const onRenew = vi.fn();
    const onCancel = vi.fn();
    const authorizeSender = vi.fn(
      (notification: { resource: { merchant_id?: string } }, headers: Readonly<Record<string, string>>) =>
        MERCHANT_OF[headers["x-tenant"] ?? ""] === notification.resource.merchant_id,
    );
    const { receiver: r, lines } = receiver({ onRenew, onCancel, authorizeSender });
    const forged = await r.handle(
      await signedBy("tenantA", event("SUBSCRIPTION_RENEW", "EVT-B-7", "2026-03-01T12:00:00Z")),
    );
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.body)).toEqual({
      processed: false,
      message: "this sender may not send this notification",
    });
    expect(onRenew).not.toHaveBeenCalled();
    expect(lines().some((line) => line.outcome === "forbidden" && line.notification_id === "EVT-B-7")).toBe(true);

    // B's real delivery with that id and B's real cancellation are untouched.
    const real = await r.handle(
      await signedBy("tenantB", event("SUBSCRIPTION_RENEW", "EVT-B-7", "2026-03-01T10:00:00Z")),
    );
    expect(real.status).toBe(200);
    expect(onRenew).toHaveBeenCalledTimes(1);
    const cancel = await r.handle(
      await signedBy("tenantB", event("SUBSCRIPTION_CANCELLED", "EVT-B-8", "2026-03-01T11:00:00Z")),
    );
    expect(JSON.parse(cancel.body).message).toBe("processed");
    expect(onCancel).toHaveBeenCalledTimes(1);
    await r.close();
  });

  it("treats an authorizeSender that throws as a refusal, not a crash", async () => {
    const onRenew = vi.fn();
    const { receiver: r } = receiver({
      onRenew,
      authorizeSender: () => {
        throw new Error("tenant directory down");
      },
    });
    const answer = await r.handle(
      await signedBy("tenantB", event("SUBSCRIPTION_RENEW", "EVT-B-9", "2026-03-01T10:00:00Z")),
    );
    expect(answer.status).toBe(403);
    expect(onRenew).not.toHaveBeenCalled();
    await r.close();
  });
});
