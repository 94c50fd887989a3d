import { Redis } from "ioredis";
import {
  createReceiver,
  hmacVerifier,
  type IdempotencyStore,
  memoryStore,
  type ReceiverOptions,
} from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification, signHmac } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

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

const event = (
  type: "SUBSCRIPTION_RENEW" | "SUBSCRIPTION_CANCELLED",
  id: string,
  updateTime: string,
  merchant = "M-B",
) => buildNotification(type, { id, resource: { merchant_id: merchant, id: "SUB-B-1", update_time: updateTime } });

/** The check the docs recommend: the tenant header picked the secret; only its merchant may follow. */
const ownMerchantOnly = (
  notification: { resource: { merchant_id?: string } },
  headers: Readonly<Record<string, string>>,
) => MERCHANT_OF[headers["x-tenant"] ?? ""] === notification.resource.merchant_id;

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

describe("a tenant spending another tenant's next id under its own merchant_id", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("tenant");
  afterAll(async () => {
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  const stores: Array<[string, () => IdempotencyStore]> = [
    ["the memory store", () => memoryStore()],
    ["redisStore", () => redisStore({ connection: REDIS_URL, prefix })],
  ];

  it.each(stores)(
    "passes authorizeSender, yet B's real notification still runs once, in order (%s)",
    async (_, store) => {
      const ran: Array<{ id: string; merchant: string | undefined }> = [];
      const onRenew = vi.fn((n: { id: string; resource: { merchant_id?: string } }) => {
        ran.push({ id: n.id, merchant: n.resource.merchant_id });
      });
      const onStale = vi.fn();
      const idempotency = store();
      const { receiver: r } = receiver({ idempotency, onRenew, onStale, authorizeSender: ownMerchantOnly });
      const id = `EVT-B-${prefix}`;
      // A's own merchant, B's next id, B's subscription id, a later update_time: allowed, as A's own.
      const spent = await r.handle(
        await signedBy("tenantA", event("SUBSCRIPTION_RENEW", id, "2026-03-01T12:00:00Z", "M-A")),
      );
      expect(spent.status).toBe(200);
      // B's real notification with that id: neither a duplicate, nor 422, nor stale behind A's.
      const real = await r.handle(await signedBy("tenantB", event("SUBSCRIPTION_RENEW", id, "2026-03-01T10:00:00Z")));
      expect(real.status).toBe(200);
      expect(JSON.parse(real.body)).toEqual({ processed: true, message: "processed" });
      // Its redelivery is a duplicate of B's own record: still once.
      const again = await r.handle(await signedBy("tenantB", event("SUBSCRIPTION_RENEW", id, "2026-03-01T10:00:00Z")));
      expect(JSON.parse(again.body)).toEqual({ processed: true, message: "already processed" });
      expect(onStale).not.toHaveBeenCalled();
      expect(ran).toEqual([
        { id, merchant: "M-A" },
        { id, merchant: "M-B" },
      ]);
      await r.close();
      await idempotency.close?.();
    },
  );

  it("through a durable queue: the worker claims each tenant's record, and B's notification runs once", async () => {
    const ran: Array<string | undefined> = [];
    const idempotency = redisStore({ connection: REDIS_URL, prefix: `${prefix}q-store:` });
    const queue = bullmqQueue({ connection: REDIS_URL, name: "tenants", prefix: `${prefix}q` });
    const { receiver: r } = receiver({ idempotency, queue, ordering: false, authorizeSender: ownMerchantOnly });
    const worker = createWorker({
      connection: REDIS_URL,
      name: "tenants",
      prefix: `${prefix}q`,
      idempotency,
      logger: captureLogger().logger,
      onRenew: (n) => void ran.push(n.resource.merchant_id),
    });
    try {
      const id = `EVT-B-queued-${prefix}`;
      const spent = await r.handle(
        await signedBy("tenantA", event("SUBSCRIPTION_RENEW", id, "2026-03-01T12:00:00Z", "M-A")),
      );
      expect(JSON.parse(spent.body).message).toBe("accepted for processing");
      const real = await r.handle(await signedBy("tenantB", event("SUBSCRIPTION_RENEW", id, "2026-03-01T10:00:00Z")));
      expect(JSON.parse(real.body).message).toBe("accepted for processing");
      await eventually(
        async () => (await idempotency.get(`M-B/${id}`))?.state === "completed",
        20_000,
        "B's record completed",
      );
      await eventually(
        async () => (await idempotency.get(`M-A/${id}`))?.state === "completed",
        20_000,
        "A's record completed",
      );
      expect(ran.sort()).toEqual(["M-A", "M-B"]);
    } finally {
      await worker.close();
      await r.close();
      await idempotency.close();
    }
  });

  it("keeps records under the tenant an authorizeSender names, and refuses an empty name", async () => {
    const onRenew = vi.fn();
    const idempotency = memoryStore();
    const { receiver: r } = receiver({
      idempotency,
      onRenew,
      authorizeSender: (_, headers) => (headers["x-tenant"] === "tenantB" ? "tenant/B" : ""),
    });
    const id = "EVT-B-named";
    expect(
      (await r.handle(await signedBy("tenantB", event("SUBSCRIPTION_RENEW", id, "2026-03-01T10:00:00Z")))).status,
    ).toBe(200);
    expect(await idempotency.get(`tenant%2FB/${id}`)).toMatchObject({ state: "completed" });
    expect(await idempotency.get(id)).toBeUndefined();
    expect(
      (await r.handle(await signedBy("tenantA", event("SUBSCRIPTION_RENEW", "EVT-A-1", "2026-03-01T10:00:00Z"))))
        .status,
    ).toBe(403);
    expect(onRenew).toHaveBeenCalledTimes(1);
    await r.close();
  });
});
