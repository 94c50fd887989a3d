import { createReceiver, memoryStore } from "merchant-webhooks";
import { type BullmqNotificationQueue, bullmqQueue, createWorker, jobIdFor } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL } from "../support/redis.js";
import { suitePrefix } from "./suite-prefix.js";

const PAN = "4111 1111 1111 1111";
const CVV = "cvv: 927";

/** What a careless payment client throws: the request it sent, card data included, in the message. */
function leakyError(): Error {
  const err = new Error(`charge declined for card ${PAN}, ${CVV}`, {
    cause: new Error(`upstream echoed 5555555555554444`),
  });
  Object.assign(err, { request: { card_number: "378282246310005", CVC: "cvc-4431" } });
  return err;
}
const LEAKS = [PAN, CVV, "5555555555554444", "378282246310005", "cvc-4431"];

/** The notification's job, once it is in the failed set. */
async function failedJob(queue: BullmqNotificationQueue, id: string) {
  await eventually(async () => (await queue.queue.getJobState(jobIdFor(id))) === "failed", 15_000, "the job to fail");
  return (await queue.queue.getJob(jobIdFor(id)))!;
}

describe("handler errors pass card redaction before they are logged or stored", () => {
  it("in the receiver's log line and in what the handler logs itself", async () => {
    const { logger, text } = captureLogger();
    const receiver = createReceiver({
      logger,
      onRenew: (_, ctx) => {
        const err = leakyError();
        ctx.log.error({ err }, "charging failed");
        throw err;
      },
    });
    const response = await receiver.handle({ method: "POST", headers: {}, rawBody: json(notification()) });
    expect(response.status).toBe(500);
    expect(text()).toContain("charging failed");
    expect(text()).toContain("charge declined for card");
    for (const leak of LEAKS) expect(text()).not.toContain(leak);
  });

  describe("in a BullMQ worker", () => {
    const prefix = suitePrefix("errors");

    it("in the failed job's failedReason and stacktrace, and in the worker's log", async () => {
      const store = memoryStore();
      const queue = bullmqQueue({ connection: REDIS_URL, name: "errors", prefix, jobOptions: { attempts: 1 } });
      const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
      const body = notification();
      expect((await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) })).status).toBe(200);

      const { logger, text } = captureLogger();
      const worker = createWorker({
        connection: REDIS_URL,
        name: "errors",
        prefix,
        idempotency: store,
        logger,
        onRenew: (n) => {
          const err = leakyError();
          // What a payment library's error often says: the holder's name, as the notification spells it or not.
          const holder = n.resource.renewal_event!.payment_detail!.card_info!.holder_name!;
          err.message += ` (holder ${holder}, subscriber ${n.resource.subscriber!.name}, ${holder.toLowerCase()})`;
          return Promise.reject(err);
        },
      });
      try {
        const job = await failedJob(queue, body.id);
        expect(job.failedReason).toContain("charge declined for card");
        const stored = JSON.stringify([job.failedReason, job.stacktrace]);
        for (const leak of LEAKS) expect(stored).not.toContain(leak);
        const holder = body.resource.renewal_event.payment_detail.card_info.holder_name;
        const name = body.resource.subscriber.name;
        expect(holder.length).toBeGreaterThan(3);
        expect(job.failedReason).toContain("(holder [REDACTED], subscriber [REDACTED], [REDACTED])");
        for (const leak of [holder, name, holder.toLowerCase()]) {
          expect(stored).not.toContain(leak);
          expect(text()).not.toContain(leak);
        }
        expect(text()).toContain("notification failed");
        for (const leak of LEAKS) expect(text()).not.toContain(leak);
      } finally {
        await worker.close();
        await receiver.close();
      }
    });
    it("in failedReason, however the error spells the holder's name", async () => {
      const store = memoryStore();
      const queue = bullmqQueue({ connection: REDIS_URL, name: "names", prefix, jobOptions: { attempts: 1 } });
      const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue });
      const body = notification();
      body.resource.renewal_event.payment_detail.card_info.holder_name = "Ada Lovelace";
      body.resource.subscriber.name = "José Ferreira";
      expect((await receiver.handle({ method: "POST", headers: {}, rawBody: json(body) })).status).toBe(200);
      const worker = createWorker({
        connection: REDIS_URL,
        name: "names",
        prefix,
        idempotency: store,
        logger: silentLogger(),
        onRenew: () =>
          Promise.reject(
            new Error(
              "declined for Ada%20Lovelace; retry for Lovelace, Ada; or Ada  Lovelace; " +
                "payer Lovelace; subscriber Jos%C3%A9+Ferreira, FERREIRA; adapter ok",
            ),
          ),
      });
      try {
        const job = await failedJob(queue, body.id);
        const stored = JSON.stringify([job.failedReason, job.stacktrace]).toLowerCase();
        for (const word of ["ada", "lovelace", "jos", "ferreira"])
          expect(stored).not.toMatch(new RegExp(`\\b${word}\\b`));
        // Words that only contain a name are kept: the message still reads.
        expect(job.failedReason).toContain("declined for [REDACTED]%20[REDACTED]; retry for [REDACTED], [REDACTED];");
        expect(job.failedReason).toContain("adapter ok");
      } finally {
        await worker.close();
        await receiver.close();
      }
    });
  });
});
