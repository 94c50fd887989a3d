import { createReceiver, eventReceiverOptions, jsonlRecorder, memoryStore, parseNotification } from "merchant-webhooks";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { createPaymentClient, orderEventSchema } from "merchant-webhooks/client";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { subscriptionWebhook as fetchWebhook } from "merchant-webhooks/fetch";
import { redisStore, redisStreamRecorder } from "merchant-webhooks/redis";
import { subscriptionNotificationSchema } from "merchant-webhooks/schema";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { SMALLEST_NOTIFICATION_BYTES } from "../../src/receiver/options.js";
import { levenshtein, nearest } from "../../src/shared/option-keys.js";

/** Call an entry point with options the types would refuse, as plain JavaScript would. */
const loose =
  <T>(fn: (options: T) => unknown, options: Record<string, unknown>) =>
  () =>
    fn(options as T);

describe("an unknown option key is refused at construction, with the likely intended name", () => {
  it("createReceiver and the adapters: store → idempotency, onRenewal → onRenew", () => {
    expect(loose(createReceiver, { store: memoryStore() })).toThrow(
      /^createReceiver: unknown option "store"\. Did you mean "idempotency"\? Accepted options: .*bodyLimit/,
    );
    expect(loose(subscriptionWebhook, { onRenewal: () => {} })).toThrow(
      'createReceiver: unknown handler "onRenewal". Did you mean "onRenew"?',
    );
    expect(loose(fetchWebhook, { handlerTimeout: 5 })).toThrow('Did you mean "handlerTimeoutMs"?');
    expect(loose(createReceiver, { zzz: 1 })).toThrow(/unknown option "zzz"\. Accepted options:/);
  });

  it("eventReceiverOptions, parseNotification, memoryStore, redisStore, recorders, client, simulator", async () => {
    const handler = () => {};
    expect(loose(eventReceiverOptions, { schema: orderEventSchema, handler, onRenew: handler })).toThrow(
      /^eventReceiverOptions: unknown handler "onRenew"/,
    );
    await expect(parseNotification("{}", {}, { bodylimit: 10 } as never)).rejects.toThrow(
      'parseNotification: unknown option "bodylimit". Did you mean "bodyLimit"?',
    );
    expect(loose(memoryStore, { maxEntry: 10 })).toThrow(
      'memoryStore: unknown option "maxEntry". Did you mean "maxEntries"?',
    );
    expect(loose(redisStore, { connection: "redis://127.0.0.1:1", prefx: "a:" })).toThrow(
      'redisStore: unknown option "prefx". Did you mean "prefix"?',
    );
    expect(loose(redisStreamRecorder, { connection: "redis://127.0.0.1:1", stream: "s", maxLength: 5 })).toThrow(
      'redisStreamRecorder: unknown option "maxLength". Did you mean "maxLen"?',
    );
    expect(loose(jsonlRecorder, { directory: "/tmp/x" })).toThrow('jsonlRecorder: unknown option "directory"');
    expect(loose(createPaymentClient, { baseURL: "http://x" })).toThrow(
      'createPaymentClient: unknown option "baseURL". Did you mean "baseUrl"?',
    );
    expect(loose(createPaymentClient, { baseUrl: "http://x", retry: { attempt: 2 } })).toThrow(
      'createPaymentClient: retry: unknown option "attempt". Did you mean "attempts"?',
    );
    expect(loose(createPlatformSimulator, { timescale: 0.001 })).toThrow(
      'createPlatformSimulator: unknown option "timescale". Did you mean "timeScale"?',
    );
    expect(loose(createPlatformSimulator, { chaos: { duplicateRatio: 0.1 } })).toThrow('Did you mean "duplicateRate"?');
  });

  it("bullmqQueue and createWorker", () => {
    expect(loose(bullmqQueue, { connection: "redis://127.0.0.1:1", name: "q", jobOpts: {} })).toThrow(
      'bullmqQueue: unknown option "jobOpts". Did you mean "jobOptions"?',
    );
    expect(loose(createWorker, { connection: "redis://127.0.0.1:1", name: "q", concurency: 2 })).toThrow(
      'createWorker: unknown option "concurency". Did you mean "concurrency"?',
    );
  });

  it("the distance helper", () => {
    expect(levenshtein("onRenewal", "onRenew")).toBe(2);
    expect(nearest("idempotncy", ["idempotency", "logger"])).toBe("idempotency");
    expect(nearest("banana", ["idempotency", "logger"])).toBeUndefined();
  });
});

describe("a missing, empty or malformed Redis connection is refused, saying what was given and what is expected", () => {
  const cases: Array<[string, () => unknown]> = [
    ["redisStore", () => redisStore({ connection: process.env.UNSET_FOR_THIS_TEST as string })],
    ["bullmqQueue", () => bullmqQueue({ connection: undefined as never, name: "q" })],
    ["createWorker", () => createWorker({ connection: undefined as never, name: "q" })],
    ["redisStreamRecorder", () => redisStreamRecorder({ connection: undefined as never, stream: "s" })],
  ];
  it.each(cases)("%s without a connection", (name, start) => {
    expect(start).toThrow(
      new RegExp(
        `^${name}: \`connection\` is required, and none was given \\(undefined\\); expected a Redis URL such as "redis://127\\.0\\.0\\.1:6379".*Is REDIS_URL set\\?`,
      ),
    );
  });

  it('REDIS_URL="" is not read as localhost', () => {
    expect(() => redisStore({ connection: "" })).toThrow(
      'redisStore({ connection }): the Redis URL is an empty string (is REDIS_URL set but empty?); expected a Redis URL such as "redis://127.0.0.1:6379"',
    );
    expect(() => bullmqQueue({ connection: "", name: "q" })).toThrow(/empty string/);
  });

  it("a URL of another scheme or no URL at all, with its password hidden", () => {
    expect(() => redisStore({ connection: "http://user:hunter2@cache:6379" })).toThrow(
      '"http://user:****@cache:6379/" has the scheme "http:", not redis: or rediss:',
    );
    expect(() => createWorker({ connection: "localhost:6379", name: "q" })).toThrow(/has the scheme "localhost:"/);
    expect(() => redisStore({ connection: "not a url" })).toThrow('"not a url" is not a URL');
    expect(() => redisStore({ connection: {} as never })).toThrow(
      /ioredis options without host, port, path or sentinels/,
    );
    expect(() => redisStore({ connection: 6379 as never })).toThrow(/a number is not a Redis connection/);
  });
});

describe("limits that cannot work are refused at start", () => {
  it("handlerTimeoutMs of NaN, 0 without a queue, or past the timer maximum", () => {
    expect(() => createReceiver({ handlerTimeoutMs: Number.NaN })).toThrow(
      "handlerTimeoutMs must be a number of 0 or more, got NaN",
    );
    expect(() => createReceiver({ handlerTimeoutMs: 0 })).toThrow(
      /handlerTimeoutMs is 0 \(no limit\), but without a queue the sender's request stays open/,
    );
    expect(() => createReceiver({ handlerTimeoutMs: 2 ** 31 })).toThrow(/a longer timer fires at once in Node/);
  });

  it("bodyLimit below the smallest valid notification, with the unit spelt out", () => {
    expect(() => createReceiver({ bodyLimit: 60 })).toThrow(
      `bodyLimit is 60 bytes, below the smallest valid notification (${SMALLEST_NOTIFICATION_BYTES} bytes), so every delivery would get 413. It is in bytes: for 256 KiB write 256 * 1024.`,
    );
    expect(() => createReceiver({ bodyLimit: SMALLEST_NOTIFICATION_BYTES })).not.toThrow();
  });

  it("the smallest valid notification is the size the bodyLimit check names", () => {
    const smallest = '{"id":"x","event_type":"","resource":{"execution_phase":"x"}}';
    expect(Buffer.byteLength(smallest)).toBe(SMALLEST_NOTIFICATION_BYTES);
    expect(subscriptionNotificationSchema.safeParse(JSON.parse(smallest)).success).toBe(true);
  });

  it("ordering over an eventSchema without a way to read the position", () => {
    const options = eventReceiverOptions({ schema: orderEventSchema, handler: () => {}, ordering: true });
    expect(() => createReceiver(options)).toThrow(/ordering needs a way to read each event's position/);
    const positioned = eventReceiverOptions({
      schema: orderEventSchema,
      handler: () => {},
      ordering: { key: (event) => event.id, position: () => undefined },
    });
    expect(() => createReceiver(positioned)).not.toThrow();
  });
});
