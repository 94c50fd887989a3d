import {
  createPlatformSimulator,
  type PlatformSimulator,
  type PlatformSimulatorOptions,
} from "merchant-webhooks/simulator";
import { afterEach, describe, expect, it } from "vitest";
import { recordingWebhook } from "./recording-webhook.js";
import { PROCESSED, scriptedEndpoint } from "./scripted-endpoint.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const customer = {
  merchant_id: "M-1",
  subscriber: { id: "U-1", email: "ada@example.com" },
  product: { id: "P-1", name: "Plan" },
};

/** Fast schedules: ms delays scaled down 1000x. */
const FAST = { timeScale: 0.001, retrySchedule: [0, 5_000, 30_000, 60_000] } satisfies PlatformSimulatorOptions;

describe("the simulator delivers like a platform", () => {
  let sim: PlatformSimulator | undefined;
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await sim?.close();
    for (const close of cleanup.splice(0)) await close();
  });

  async function receiver() {
    const started = await recordingWebhook(SECRET);
    cleanup.push(() => started.webhook.close());
    return started;
  }

  it("sends each lifecycle call, signed with Standard Webhooks, to a verifying receiver once", async () => {
    const { webhook, calls } = await receiver();
    sim = createPlatformSimulator({ webhookUrl: webhook.url, secret: SECRET, ...FAST });
    const sub = await sim.subscriptions.create(customer);
    await sim.settled();
    await sub.renew();
    await sim.settled();
    await sub.suspend("card expired");
    await sim.settled();
    await sub.resume();
    await sim.settled();
    await sub.cancel();
    await sim.settled();

    expect(calls.map((call) => call.split(" ").slice(0, 2).join(" "))).toEqual(
      ["created", "renew", "suspend", "resume", "cancel"].map((name) => `${name} ${sub.id}`),
    );
    const deliveries = sim.deliveries();
    expect(deliveries.map((delivery) => delivery.event_type)).toEqual([
      "SUBSCRIPTION_CREATED",
      "SUBSCRIPTION_RENEW",
      "SUBSCRIPTION_SUSPENDED",
      "SUBSCRIPTION_RESUMED",
      "SUBSCRIPTION_CANCELLED",
    ]);
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({ subscription_id: sub.id, delivered: true, pending: false });
      expect(delivery.attempts).toEqual([
        expect.objectContaining({ status: 200, processed: true, message: "processed" }),
      ]);
    }
    expect(sub.status).toBe("CANCELLED");
    expect(sub.phase).toBe(2);
    expect(sim.undelivered()).toEqual({ exhausted: [], pending: [] });
  });

  it("retries a 500, a processed:false and a time-out, then stops at the first processed:true", async () => {
    const endpoint = await scriptedEndpoint([
      { status: 500, body: { processed: false, message: "boom" } },
      { status: 200, body: { processed: false, message: "later" } },
      "hang",
      PROCESSED,
    ]);
    cleanup.push(endpoint.close);
    sim = createPlatformSimulator({
      webhookUrl: endpoint.url,
      ...FAST,
      retrySchedule: [0, 1_000, 1_000, 1_000, 1_000],
      attemptTimeoutMs: 300,
    });
    await sim.subscriptions.create(customer);
    await sim.settled();

    const [delivery] = sim.deliveries();
    expect(delivery!.delivered).toBe(true);
    expect(delivery!.attempts.map((attempt) => [attempt.status, attempt.processed, attempt.message])).toEqual([
      [500, false, "boom"],
      [200, false, "later"],
      [0, false, "timed out"],
      [200, true, "processed"],
    ]);
    expect(endpoint.received).toHaveLength(4);
    // One notification: the same id on every attempt.
    expect(new Set(endpoint.received.map((request) => JSON.parse(request.body).id)).size).toBe(1);
  });

  it("reports a delivery whose schedule ran out as undelivered", async () => {
    const endpoint = await scriptedEndpoint([
      { status: 503, body: { processed: false, message: "store unavailable" } },
    ]);
    cleanup.push(endpoint.close);
    sim = createPlatformSimulator({ webhookUrl: endpoint.url, ...FAST, retrySchedule: [0, 1_000, 2_000] });
    const sub = await sim.subscriptions.create(customer);
    await sim.settled();

    const { exhausted, pending } = sim.undelivered();
    expect(pending).toEqual([]);
    expect(exhausted).toHaveLength(1);
    expect(exhausted[0]).toMatchObject({ subscription_id: sub.id, delivered: false, pending: false });
    expect(exhausted[0]!.attempts.map((attempt) => attempt.status)).toEqual([503, 503, 503]);
    expect(sim.undeliveredTable()).toContain(exhausted[0]!.id);
    expect(sim.undeliveredTable()).toContain("1 exhausted, 0 pending");
    expect(
      sim
        .attemptTable()
        .split("\n")
        .filter((line) => line.includes("store unavailable")),
    ).toHaveLength(3);
  });

  it("re-serialises retries: other bytes, the same JSON value", async () => {
    const endpoint = await scriptedEndpoint([{ status: 500, body: {} }, { status: 500, body: {} }, PROCESSED]);
    cleanup.push(endpoint.close);
    sim = createPlatformSimulator({ webhookUrl: endpoint.url, ...FAST, chaos: { reserializeRetries: true } });
    await sim.subscriptions.create(customer);
    await sim.settled();

    const [first, ...retries] = endpoint.received.map((request) => request.body);
    expect(retries).toHaveLength(2);
    for (const retry of retries) {
      expect(retry).not.toBe(first);
      expect(JSON.parse(retry)).toEqual(JSON.parse(first!));
    }
  });

  it("sends chaos duplicates as separate deliveries of the same notification, which the receiver runs once", async () => {
    const { webhook, calls } = await receiver();
    sim = createPlatformSimulator({
      webhookUrl: webhook.url,
      secret: SECRET,
      ...FAST,
      seed: 7,
      chaos: { duplicateRate: 1 },
    });
    const sub = await sim.subscriptions.create(customer);
    await sub.renew();
    await sim.settled();

    const deliveries = sim.deliveries();
    expect(deliveries).toHaveLength(4);
    expect(deliveries.filter((delivery) => delivery.duplicate)).toHaveLength(2);
    expect(deliveries.every((delivery) => delivery.delivered)).toBe(true);
    expect(new Set(deliveries.map((delivery) => delivery.id)).size).toBe(2);
    expect(calls).toHaveLength(2);
  });

  it("holds notifications back within the reorder window, so later ones overtake earlier ones", async () => {
    const endpoint = await scriptedEndpoint([PROCESSED]);
    cleanup.push(endpoint.close);
    sim = createPlatformSimulator({
      webhookUrl: endpoint.url,
      ...FAST,
      seed: 3,
      chaos: { reorderWindowMs: 50_000, reorderRate: 0.5 },
    });
    const subs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => sim!.subscriptions.create({ ...customer, subscriber: { id: `U-${i}` } })),
    );
    expect(subs).toHaveLength(20);
    await sim.settled();

    const deliveries = sim.deliveries();
    const held = deliveries.filter((delivery) => delivery.held);
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(20);
    const arrival = endpoint.received.map((request) => JSON.parse(request.body).id as string);
    expect(arrival).not.toEqual(deliveries.map((delivery) => delivery.id));
    expect([...arrival].sort()).toEqual(deliveries.map((delivery) => delivery.id).sort());
  });
});
