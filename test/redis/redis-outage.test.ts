import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";
import {
  eventually,
  type OwnRedisServer,
  ownRedisServer,
  REDIS_URL,
  removeKeys,
  sleep,
  uniquePrefix,
} from "../support/redis.js";
import { type Delivery, deliver, deliverPast503 } from "./fixtures/deliver.js";
import { type ReceiverProcess, spawnReceiver } from "./fixtures/spawn-receiver.js";

/** The most a sender may wait for an answer while the store's Redis is away (the store's own limit is 500 ms). */
const ANSWER_LIMIT_MS = 1_000;
const SENDERS = 8;

interface Sent extends Delivery {
  id: string;
  notification: Record<string, unknown>;
  receiver: number;
  /** What the test was doing to Redis when the notification was sent. */
  phase: string;
  sentAt: number;
  answeredAt: number;
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const figures = (values: number[]) =>
  `median ${quantile(values, 0.5).toFixed(1)} ms, p99 ${quantile(values, 0.99).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;

describe("receiver processes whose Redis goes away under load", () => {
  const effectsRedis = new Redis(REDIS_URL);
  const prefix = uniquePrefix("outage");
  const effects = `${prefix}effects:`;
  let server: OwnRedisServer;
  let receivers: ReceiverProcess[] = [];
  let phase = "up";
  let sending = false;
  const sent: Sent[] = [];

  beforeAll(async () => {
    server = await ownRedisServer();
    const env = {
      STORE_URL: server.url,
      STORE_PREFIX: "idem:",
      EFFECTS_URL: REDIS_URL,
      EFFECTS: effects,
      HANDLER_MS: "5",
    };
    receivers = await Promise.all([spawnReceiver(env), spawnReceiver(env)]);
  });
  afterAll(async () => {
    sending = false;
    await Promise.all(receivers.map((receiver) => receiver.kill()));
    await server?.stop();
    await removeKeys(effectsRedis, prefix);
    effectsRedis.disconnect();
  });

  /** Senders that each deliver fresh notifications one after another, alternating receivers, until stopped. */
  function startLoad(): Promise<void> {
    sending = true;
    let turn = 0;
    const sender = async () => {
      while (sending) {
        const renewal = notification();
        const receiver = turn++ % receivers.length;
        const at = phase;
        const sentAt = performance.now();
        const answer = await deliver(receivers[receiver]!.url, renewal);
        sent.push({
          id: renewal.id,
          notification: renewal,
          receiver,
          phase: at,
          sentAt,
          answeredAt: performance.now(),
          ...answer,
        });
      }
    };
    return Promise.all(Array.from({ length: SENDERS }, sender)).then(() => {});
  }
  const inPhase = (name: string) => sent.filter((answer) => answer.phase === name);
  const recovered = (name: string) =>
    receivers.every((_, i) => inPhase(name).some((answer) => answer.receiver === i && answer.status === 200));
  const count = async (kind: "started" | "done", ids: string[]) =>
    ids.length === 0 ? [] : (await effectsRedis.mget(ids.map((id) => `${effects}${kind}:${id}`))).map(Number);

  /**
   * Every answer sent and received while Redis was away (a request sent just before Redis is back may
   * rightly be processed): 503, processed false, Retry-After, in time; and not one handler started.
   */
  async function expectRefused(name: string, until: number): Promise<number[]> {
    const answers = inPhase(name).filter((answer) => answer.answeredAt < until);
    expect(answers.length).toBeGreaterThanOrEqual(SENDERS);
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.body.processed).toBe(false);
      expect(answer.retryAfter).toBe("5");
      expect(answer.ms).toBeLessThan(ANSWER_LIMIT_MS);
    }
    expect(
      (
        await count(
          "started",
          answers.map((answer) => answer.id),
        )
      ).every((n) => n === 0),
    ).toBe(true);
    return answers.map((answer) => answer.ms);
  }

  it("answers 503 at once while Redis is stopped, and processes again in the same processes once it restarts", async () => {
    const load = startLoad();
    await eventually(() => recovered("up"), 10_000, "both receivers to answer 200");
    await server.stop();
    phase = "stopped";
    await sleep(600);
    const back = performance.now();
    await server.start();
    phase = "restarted";
    await eventually(() => recovered("restarted"), 10_000, "both receivers to process again");
    sending = false;
    await load;

    const times = await expectRefused("stopped", back);
    console.log(`503 answers while Redis was stopped (${times.length}): ${figures(times)}`);
  });

  it("answers 503 within the limit while Redis hangs, and processes again once it answers", async () => {
    phase = "up-again";
    const load = startLoad();
    await eventually(() => recovered("up-again"), 10_000, "both receivers to answer 200");
    server.freeze();
    phase = "frozen";
    await sleep(2_000);
    const back = performance.now();
    server.thaw();
    phase = "thawed";
    await eventually(() => recovered("thawed"), 10_000, "both receivers to process again");
    sending = false;
    await load;

    const times = await expectRefused("frozen", back);
    console.log(`503 answers while Redis hung (${times.length}): ${figures(times)}`);
  });

  it("loses no notification: each one refused is processed on redelivery, and each handler ran once", async () => {
    const refused = sent.filter((answer) => answer.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    // Redelivered as the sender would after Retry-After, to either process.
    const redelivered = await Promise.all(
      refused.map((answer, i) => deliverPast503(receivers[i % 2]!.url, answer.notification)),
    );
    expect(redelivered.every((answer) => answer.status === 200 && answer.body.processed)).toBe(true);

    // Every notification ever answered processed: true had its effect exactly once.
    const processed = [
      ...new Set(sent.filter((answer) => answer.body.processed).map((answer) => answer.id)),
      ...refused.map((answer) => answer.id),
    ];
    expect((await count("done", processed)).every((n) => n === 1)).toBe(true);
  });
});
