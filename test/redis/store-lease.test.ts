import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";

const prefix = uniquePrefix("lease");
const admin = new Redis(REDIS_URL);

afterAll(async () => {
  await removeKeys(admin, prefix);
  admin.disconnect();
});

describe("the store's leaseMs", () => {
  it("is the receiver's lease when the receiver names none", async () => {
    const store = redisStore({ connection: REDIS_URL, prefix, leaseMs: 2_000 });
    let release!: () => void;
    const onRenew = vi.fn(() => new Promise<void>((resolve) => (release = resolve)));
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, onRenew });
    const body = json(notification());
    const first = receiver.handle({ method: "POST", headers: {}, rawBody: body });
    await vi.waitFor(() => expect(onRenew).toHaveBeenCalled());
    const busy = await receiver.handle({ method: "POST", headers: {}, rawBody: body });
    expect(busy.status).toBe(409);
    // a 30 s default lease would advertise 30; the store's 2 s lease advertises at most 2
    expect(Number(busy.headers["retry-after"])).toBeLessThanOrEqual(2);
    release();
    expect((await first).status).toBe(200);
    await store.close();
  });
});
