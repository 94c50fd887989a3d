import { closeOnSignals, createReceiver } from "merchant-webhooks";
import { describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { storeThatCannotComplete } from "../support/store-that-cannot-complete.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

/** Sends SIGUSR2 to a closeOnSignals set up with a capturing logger; resolves with the exit code. */
async function shutDown(targets: Parameters<typeof closeOnSignals>[0], signals = 1) {
  const { logger, lines } = captureLogger();
  const exit = vi.fn();
  const remove = closeOnSignals(targets, { timeoutMs: 200, signals: ["SIGUSR2"], exit, logger });
  try {
    for (let i = 0; i < signals; i++) process.emit("SIGUSR2", "SIGUSR2");
    await vi.waitFor(() => expect(exit).toHaveBeenCalled(), { timeout: 20_000 });
  } finally {
    remove();
  }
  return { code: exit.mock.calls[0]![0] as number, lines: lines() };
}

describe("closeOnSignals tells what it is doing", () => {
  it("logs the signal, how much is in flight while draining, and that it closed", async () => {
    const receiver = createReceiver({ logger: silentLogger(), onRenew: () => {} });
    const { code, lines } = await shutDown(receiver);
    expect(code).toBe(0);
    expect(lines.map((line) => line.msg)).toEqual([
      "signal received: closing",
      "draining 0 in flight",
      "closed: exiting",
    ]);
    expect(lines[0]).toMatchObject({ signal: "SIGUSR2", targets: 1, timeout_ms: 200 });
  });

  it("counts background work still running, and says it exits 1 when the close runs out of time", async () => {
    const idempotency = storeThatCannotComplete();
    const receiver = createReceiver({ logger: silentLogger(), idempotency, onRenew: () => {} });
    expect((await receiver.handle(post(json(notification())))).status).toBe(200);
    const { code, lines } = await shutDown(receiver);
    expect(code).toBe(1);
    expect(lines).toContainEqual(expect.objectContaining({ msg: "draining 1 in flight", in_flight: 1 }));
    expect(lines.at(-1)).toMatchObject({ level: 40, msg: expect.stringContaining("exiting 1") });
  });

  it("logs a close that throws, and a second signal exits at once", async () => {
    const never = { close: () => new Promise<never>(() => {}) };
    const { code, lines } = await shutDown(never, 2);
    expect(code).toBe(1);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: expect.stringContaining("second signal") }));

    const failing = { close: () => Promise.reject(new Error("socket gone")) };
    const second = await shutDown(failing);
    expect(second.code).toBe(1);
    expect(second.lines).toContainEqual(expect.objectContaining({ msg: "close failed", target: 0 }));
  });
});
