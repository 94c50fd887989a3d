import { createReceiver } from "merchant-webhooks";
import { closeOnSignals } from "merchant-webhooks/bullmq";
import { describe, expect, it, vi } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { storeThatCannotComplete } from "../support/store-that-cannot-complete.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

async function receiverWithUnfinishedWork() {
  const { logger, lines } = captureLogger();
  const receiver = createReceiver({ logger, idempotency: storeThatCannotComplete(), onRenew: () => {} });
  const body = notification();
  expect((await receiver.handle(post(json(body)))).status).toBe(200);
  return { receiver, lines, body };
}

describe("receiver.close", () => {
  it("stops waiting for background work after { timeoutMs } and logs what it abandoned", async () => {
    const { receiver, lines } = await receiverWithUnfinishedWork();
    await receiver.close({ timeoutMs: 100 });
    expect(lines()).toContainEqual(
      expect.objectContaining({ level: 40, abandoned: ["completion record"], timeout_ms: 100 }),
    );
  });

  it("is given closeOnSignals' timeout, so the process exits on SIGTERM with the store down", async () => {
    const { receiver, lines } = await receiverWithUnfinishedWork();
    const exit = vi.fn();
    const remove = closeOnSignals(receiver, { timeoutMs: 100, signals: ["SIGUSR2"], exit });
    try {
      process.emit("SIGUSR2", "SIGUSR2");
      await vi.waitFor(() => expect(exit).toHaveBeenCalled(), { timeout: 20_000 });
    } finally {
      remove();
    }
    expect(lines()).toContainEqual(expect.objectContaining({ abandoned: ["completion record"], timeout_ms: 100 }));
  });
});
