import { createReceiver, type HandlerContext } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const post = (body: Uint8Array) => ({
  method: "POST",
  headers: { "content-type": "application/json", "X-Trace": "t-1" },
  rawBody: body,
});

describe("the ctx a handler gets", () => {
  it("carries the id, event type, attempt, lower-cased headers and the time received, the same Date on every read", async () => {
    const body = notification("SUBSCRIPTION_CANCELLED");
    let seen: Record<string, unknown> = {};
    const before = Date.now();
    const receiver = createReceiver({
      logger: silentLogger(),
      onCancel: (_n, ctx) => {
        seen = {
          id: ctx.id,
          eventType: ctx.eventType,
          attempt: ctx.attempt,
          trace: ctx.headers["x-trace"],
          receivedAt: ctx.receivedAt,
          again: ctx.receivedAt,
        };
      },
    });
    expect((await receiver.handle(post(json(body)))).status).toBe(200);
    expect(seen).toMatchObject({ id: body.id, eventType: "SUBSCRIPTION_CANCELLED", attempt: 1, trace: "t-1" });
    expect(seen.receivedAt).toBeInstanceOf(Date);
    expect(seen.again).toBe(seen.receivedAt);
    expect((seen.receivedAt as Date).getTime()).toBeGreaterThanOrEqual(before);
  });

  it("counts attempts: a redelivery after a failed run gets attempt 2", async () => {
    const attempts: number[] = [];
    const receiver = createReceiver({
      logger: silentLogger(),
      onRenew: (_n, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) throw new Error("first run fails");
      },
    });
    const body = json(notification());
    expect((await receiver.handle(post(body))).status).toBe(500);
    expect((await receiver.handle(post(body))).status).toBe(200);
    expect(attempts).toEqual([1, 2]);
  });

  it("aborts ctx.signal, with the timeout as its reason, when an asynchronous handler passes its time limit", async () => {
    let ctxSeen: HandlerContext | undefined;
    const receiver = createReceiver({
      logger: silentLogger(),
      handlerTimeoutMs: 20,
      onRenew: (_n, ctx) => {
        ctxSeen = ctx;
        // As fetch does with an aborted signal: give up with the signal's reason.
        return new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
      },
    });
    const response = await receiver.handle(post(json(notification())));
    expect(response.status).toBe(500);
    expect(ctxSeen!.signal.aborted).toBe(true);
    expect(ctxSeen!.signal.reason).toMatchObject({ name: "HandlerTimeoutError" });
  });

  it("leaves ctx.signal unaborted for a handler that finishes within its limit, synchronously or not", async () => {
    const signals: AbortSignal[] = [];
    const receiver = createReceiver({
      logger: silentLogger(),
      handlerTimeoutMs: 20,
      onRenew: (_n, ctx) => void signals.push(ctx.signal),
      onCancel: async (_n, ctx) => void signals.push(ctx.signal),
    });
    expect((await receiver.handle(post(json(notification("SUBSCRIPTION_RENEW"))))).status).toBe(200);
    expect((await receiver.handle(post(json(notification("SUBSCRIPTION_CANCELLED"))))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false]);
  });

  it("gives ctx.log bound to the notification, redacting card secrets", async () => {
    const { logger, lines } = captureLogger();
    const body = notification();
    const receiver = createReceiver({ logger, onRenew: (_n, ctx) => ctx.log.info({ cvc: "123" }, "from the handler") });
    expect((await receiver.handle(post(json(body)))).status).toBe(200);
    const line = lines().find((entry) => entry.msg === "from the handler");
    expect(line).toMatchObject({ notification_id: body.id, event_type: "SUBSCRIPTION_RENEW", attempt: 1 });
    expect(line!.cvc).not.toBe("123");
  });
});
