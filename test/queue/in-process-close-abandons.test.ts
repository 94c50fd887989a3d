import { closeOnSignals, createReceiver, inProcessQueue, memoryStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";

/**
 * `inProcessQueue` is not durable: notifications it accepted (answered `processed: true`) and has not
 * run when the receiver's close runs out of time are lost. That must not pass for a clean close: the
 * receiver says how many it abandons, and counts them in flight, so `closeOnSignals` exits with 1.
 */
describe("a receiver closed with accepted notifications its in-process queue has not run", () => {
  it("logs how many it abandons and counts them in flight, so the close is not clean", async () => {
    const { logger, lines } = captureLogger();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const queue = inProcessQueue({ concurrency: 1 });
    const receiver = createReceiver({
      logger,
      idempotency: memoryStore(),
      queue,
      onRenew: async (n) => {
        await held;
        ran.push(n.id);
      },
    });
    const bodies = [notification(), notification(), notification()];
    for (const body of bodies) expect((await receiver.handle(post(body))).status).toBe(200);
    // One runs (and hangs), two wait for the slot: all three were accepted.
    expect(receiver.inFlight()).toBe(3);

    await receiver.close({ timeoutMs: 50 });
    const warning = lines().find((line) => line.abandoned_notifications !== undefined);
    expect(warning).toMatchObject({ level: 40, abandoned_notifications: 3 });
    expect(warning!.msg).toMatch(/not durable/);
    expect(receiver.inFlight()).toBe(3);
    release();
    await queue.close({ timeoutMs: 5_000 });
    expect(ran.length).toBeGreaterThan(0);
  });

  it("closeOnSignals exits with 1 after such a close", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const queue = inProcessQueue({ concurrency: 1 });
    const receiver = createReceiver({
      logger: captureLogger().logger,
      idempotency: memoryStore(),
      queue,
      onRenew: () => held,
    });
    expect((await receiver.handle(post(notification()))).status).toBe(200);
    const exits: number[] = [];
    // A signal of its own, so the test runner's SIGTERM handling is left alone.
    const remove = closeOnSignals([receiver], {
      timeoutMs: 50,
      signals: ["SIGUSR2"],
      logger: captureLogger().logger,
      exit: (code) => void exits.push(code),
    });
    try {
      process.emit("SIGUSR2", "SIGUSR2");
      await new Promise<void>((resolve) => {
        const check = () => (exits.length > 0 ? resolve() : setTimeout(check, 10));
        check();
      });
      expect(exits).toEqual([1]);
    } finally {
      remove();
      release();
      await queue.close({ timeoutMs: 5_000 });
    }
  });
});
