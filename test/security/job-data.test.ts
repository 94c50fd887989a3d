import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createReceiver, memoryStore, REDACTED, type SubscriptionNotification } from "merchant-webhooks";
import { type BullmqNotificationQueue, bullmqQueue, createWorker, jobIdFor } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { suitePrefix } from "./suite-prefix.js";

const PAN = "4111111111111111";
const MASKED = "411111******1111";
const PAN_IN_TEXT = "5555 5555 5555 4444";
const CONTRACT = "ctr-77-secret";

/** A renewal carrying card verification data in several spellings, a card number, and a contract id. */
function renewalWithCardData() {
  const body = notification();
  const detail = body.resource.renewal_event.payment_detail;
  Object.assign(detail.card_info, {
    cvc: "cvc-901",
    CVV2: "cvv-902",
    card_pwd: "pwd-9030",
    card_number: PAN,
    card_contract_id: CONTRACT,
  });
  detail.metadata = {
    note: `customer wrote ${PAN_IN_TEXT} in the memo`,
    call: "cvc: 9417 read out on the phone",
    [PAN]: "a card number as a key",
  };
  return body;
}
const VERIFICATION = ["cvc-901", "cvv-902", "pwd-9030"];

describe("card data in BullMQ job data", () => {
  const prefix = suitePrefix("jobdata");
  const redis = new Redis(REDIS_URL);
  afterAll(() => redis.disconnect());

  /** Deliver `body` through a receiver into a queue, and return the job's data exactly as Redis holds it. */
  async function enqueue(queue: BullmqNotificationQueue, body: Record<string, unknown>): Promise<string> {
    const store = memoryStore();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
    expect((await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) })).status).toBe(200);
    const stored = await redis.hget(queue.queue.toKey(jobIdFor(String(body.id))), "data");
    expect(stored).toBeTruthy();
    return stored!;
  }

  /** What a worker's handler receives for the one job in `name`. */
  async function handled(name: string, encryptionKey?: Uint8Array): Promise<SubscriptionNotification> {
    const seen: SubscriptionNotification[] = [];
    const worker = createWorker({
      connection: REDIS_URL,
      name,
      prefix,
      idempotency: memoryStore(),
      logger: silentLogger(),
      ...(encryptionKey ? { encryptionKey } : {}),
      onRenew: (n) => void seen.push(n),
    });
    try {
      return await eventually(() => seen[0], 15_000, "the handler");
    } finally {
      await worker.close();
    }
  }

  it("never writes card verification data, and masks card numbers, without an encryption key", async () => {
    const queue = bullmqQueue({ connection: REDIS_URL, name: "masked", prefix });
    const body = renewalWithCardData();
    const stored = await enqueue(queue, body);
    for (const secret of [...VERIFICATION, PAN, PAN_IN_TEXT, CONTRACT, "cvc: 9417"])
      expect(stored).not.toContain(secret);

    const seen = await handled("masked");
    const card = seen.resource.renewal_event!.payment_detail!.card_info as Record<string, unknown>;
    expect(card).toMatchObject({
      cvc: REDACTED,
      CVV2: REDACTED,
      card_pwd: REDACTED,
      card_number: MASKED,
      card_contract_id: REDACTED,
    });
    expect(card.card_mask).toBe(body.resource.renewal_event.payment_detail.card_info.card_mask);
    expect(seen.resource.renewal_event!.payment_detail!.metadata).toEqual({
      note: "customer wrote 555555******4444 in the memo",
      call: `cvc: ${REDACTED} read out on the phone`,
      [MASKED]: "a card number as a key",
    });
    expect(seen.resource.subscriber).toEqual(body.resource.subscriber);
    await queue.close();
  });

  it("seals the payload with AES-256-GCM under encryptionKey; the worker opens it, verification data still gone", async () => {
    const key = randomBytes(32);
    const queue = bullmqQueue({ connection: REDIS_URL, name: "sealed", prefix, encryptionKey: key });
    const body = renewalWithCardData();
    const stored = await enqueue(queue, body);
    for (const secret of [
      ...VERIFICATION,
      PAN,
      PAN_IN_TEXT,
      CONTRACT,
      body.resource.subscriber.email,
      body.resource.merchant_id,
    ]) {
      expect(stored).not.toContain(secret);
    }

    const seen = await handled("sealed", key);
    const card = seen.resource.renewal_event!.payment_detail!.card_info as Record<string, unknown>;
    expect(card).toMatchObject({
      cvc: REDACTED,
      CVV2: REDACTED,
      card_pwd: REDACTED,
      card_number: PAN,
      card_contract_id: CONTRACT,
    });
    expect(seen.resource.renewal_event!.payment_detail!.metadata).toEqual(
      body.resource.renewal_event.payment_detail.metadata,
    );
    await queue.close();
  });

  it("fails a sealed job, with the reason and without running the handler, on a worker with another key", async () => {
    const queue = bullmqQueue({
      connection: REDIS_URL,
      name: "wrongkey",
      prefix,
      encryptionKey: randomBytes(32),
      jobOptions: { attempts: 1 },
    });
    const body = renewalWithCardData();
    await enqueue(queue, body);
    const ran: unknown[] = [];
    const worker = createWorker({
      connection: REDIS_URL,
      name: "wrongkey",
      prefix,
      idempotency: memoryStore(),
      logger: silentLogger(),
      encryptionKey: randomBytes(32),
      onRenew: (n) => void ran.push(n),
    });
    try {
      await eventually(
        async () => (await queue.queue.getJobState(jobIdFor(body.id))) === "failed",
        15_000,
        "the job to fail",
      );
      const job = await queue.queue.getJob(jobIdFor(body.id));
      expect(job!.failedReason).toBe("job data is sealed with a key this worker was not given (encryptionKey)");
      expect(ran).toEqual([]);
    } finally {
      await worker.close();
      await queue.close();
    }
  });

  it("refuses an encryption key that is not 32 bytes", () => {
    expect(() => bullmqQueue({ connection: REDIS_URL, name: "short", prefix, encryptionKey: randomBytes(16) })).toThrow(
      /32 bytes/,
    );
  });
});
