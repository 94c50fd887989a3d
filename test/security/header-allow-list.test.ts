import { createReceiver, type RecordedNotification } from "merchant-webhooks";
import { bullmqQueue, jobIdFor } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { REDIS_URL } from "../support/redis.js";
import { suitePrefix } from "./suite-prefix.js";

/** Credential-like headers a deny-list let through, each with a value that must not be kept. */
const CREDENTIALS = {
  "x-api_key": "cred-1",
  "x-merchant-hmac-sha256": "cred-2",
  "x-password": "cred-3",
  "x-auth": "cred-4",
  "x-client-secret-v2": "cred-5",
  "proxy-authorization": "cred-6",
};
const DESCRIPTIVE = { "content-type": "application/json", "x-request-id": "req-42", "user-agent": "platform/1.0" };

describe("headers kept at rest: an allow-list", () => {
  const prefix = suitePrefix("headers");

  it("records descriptive headers only", async () => {
    const entries: RecordedNotification[] = [];
    const receiver = createReceiver({
      logger: silentLogger(),
      onRenew: () => {},
      record: { write: (entry) => void entries.push(entry) },
    });
    await receiver.handle({
      method: "POST",
      headers: { ...CREDENTIALS, ...DESCRIPTIVE },
      rawBody: json(notification()),
    });
    await receiver.close();
    expect(entries[0]!.headers).toEqual(DESCRIPTIVE);
  });

  it("puts descriptive headers only into BullMQ job data", async () => {
    const queue = bullmqQueue({ connection: REDIS_URL, name: "allow", prefix });
    const receiver = createReceiver({ logger: silentLogger(), queue });
    const body = notification();
    expect(
      (await receiver.handle({ method: "POST", headers: { ...CREDENTIALS, ...DESCRIPTIVE }, rawBody: json(body) }))
        .status,
    ).toBe(200);
    const job = await queue.queue.getJob(jobIdFor(body.id));
    expect(job!.data.headers).toEqual(DESCRIPTIVE);
    await receiver.close();
  });
});
