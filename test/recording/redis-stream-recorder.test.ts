import { Redis } from "ioredis";
import { createReceiver } from "merchant-webhooks";
import { readRedisStream, redisStreamRecorder } from "merchant-webhooks/redis";
import { buildNotification, replay } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new Redis(REDIS_URL);
const streams: string[] = [];

/** A stream key no other run or test uses; deleted after the tests. */
function uniqueStream(): string {
  const key = `merchant-webhooks:test:recording:${process.pid}:${Date.now()}:${streams.length}`;
  streams.push(key);
  return key;
}

afterAll(async () => {
  if (streams.length > 0) await redis.del(...streams);
  await redis.quit();
});

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("redisStreamRecorder against Redis", () => {
  it("adds each notification as JSON under `entry`, redacted, and reads back as a replay source", async () => {
    const stream = uniqueStream();
    const onRenew = vi.fn();
    const receiver = createReceiver({
      onRenew,
      record: redisStreamRecorder({ connection: redis, stream }),
      logger: silentLogger(),
    });
    const renewal = buildNotification("SUBSCRIPTION_RENEW", {
      resource: { renewal_event: { payment_detail: { card_info: { cvc: "837" } } } },
    });
    const response = await receiver.handle({
      method: "POST",
      headers: { "content-type": "application/json", "x-signature": "abc123" },
      rawBody: json(renewal),
    });
    expect(response.status).toBe(200);
    await receiver.close(); // a lent client stays open

    const raw = await redis.xrange(stream, "-", "+");
    expect(raw).toHaveLength(1);
    const [, fields] = raw[0]!;
    expect(fields[0]).toBe("entry");
    expect(fields[1]).not.toContain('"837"');
    expect(fields[1]).not.toContain("abc123");

    const entries = await readRedisStream({ connection: REDIS_URL, stream });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.answer).toEqual({ status: 200, processed: true, message: "processed" });
    const fresh = vi.fn();
    const results = await replay({ onRenew: fresh }, entries);
    expect(results.map((r) => r.status)).toEqual([200]);
    expect(fresh.mock.calls[0]![0].id).toBe(renewal.id);
    expect(fresh.mock.calls[0]![0].resource.renewal_event.payment_detail.card_info.cvc).toBe("[REDACTED]");
  });

  it("trims the stream to about maxLen entries", async () => {
    const stream = uniqueStream();
    const recorder = redisStreamRecorder({ connection: redis, stream, maxLen: 10 });
    const entry = {
      received_at: new Date().toISOString(),
      headers: {},
      notification: { id: "x" },
      answer: { status: 200, processed: true, message: "processed" },
    };
    await Promise.all(Array.from({ length: 400 }, () => recorder.write(entry)));
    const length = await redis.xlen(stream);
    // Approximate trimming drops whole internal nodes, so more than maxLen may remain, never all of them.
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThan(400);
  });

  it("records through a connection made from a URL, and reads in order from a given id with a count", async () => {
    const stream = uniqueStream();
    const recorder = redisStreamRecorder({ connection: REDIS_URL, stream });
    for (const id of ["a", "b", "c"]) {
      await recorder.write({
        received_at: new Date().toISOString(),
        headers: {},
        notification: { id },
        answer: { status: 200, processed: true, message: "processed" },
      });
    }
    await recorder.close();
    const ids = (await redis.xrange(stream, "-", "+")).map(([id]) => id);
    const read = await readRedisStream({ connection: redis, stream, start: ids[1]!, count: 1 });
    expect(read.map((entry) => entry.notification.id)).toEqual(["b"]);
    expect((await readRedisStream({ connection: redis, stream })).map((entry) => entry.notification.id)).toEqual([
      "a",
      "b",
      "c",
    ]);
    expect(redis.status).toBe("ready"); // reading with a lent client leaves it open
  });

  it("takes ioredis options as `connection`", async () => {
    const stream = uniqueStream();
    const url = new URL(REDIS_URL);
    const recorder = redisStreamRecorder({
      connection: { host: url.hostname, port: Number(url.port || 6379) },
      stream,
    });
    const entry = { notification: { id: "opts" } } as unknown as Parameters<typeof recorder.write>[0];
    await recorder.write(entry);
    await recorder.close();
    const read = await readRedisStream({ connection: REDIS_URL, stream });
    expect(read.map((found) => found.notification.id)).toEqual(["opts"]);
  });
});
