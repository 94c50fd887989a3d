import { createReceiver, HandlerTimeoutError, inProcessQueue, type ReceiverOptions } from "merchant-webhooks";
import { describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";

function receiverWith(options: ReceiverOptions) {
  const receiver = createReceiver({ logger: silentLogger(), ...options });
  return async (body: unknown) => {
    const response = await receiver.handle(post(body));
    return { status: response.status, answer: JSON.parse(response.body) };
  };
}

describe("onAny", () => {
  it("runs after the typed handler, with the same notification and ctx", async () => {
    const calls: string[] = [];
    const onRenew = vi.fn(async (_n: unknown, _ctx: unknown) => void calls.push("onRenew"));
    const onAny = vi.fn(async (_n: unknown, _ctx: unknown) => void calls.push("onAny"));
    const send = receiverWith({ onRenew, onAny });
    const body = notification("SUBSCRIPTION_RENEW");
    expect(await send(body)).toEqual({ status: 200, answer: { processed: true, message: "processed" } });
    expect(calls).toEqual(["onRenew", "onAny"]);
    expect(onAny.mock.calls[0]![0]).toEqual(body);
    expect(onAny.mock.calls[0]![1]).toBe(onRenew.mock.calls[0]![1]);
  });

  it("runs for an event type with no handler of its own, which then counts as processed", async () => {
    const onAny = vi.fn();
    const send = receiverWith({ onAny });
    expect(await send(notification("SUBSCRIPTION_SUSPENDED"))).toEqual({
      status: 200,
      answer: { processed: true, message: "processed" },
    });
    expect(onAny).toHaveBeenCalledTimes(1);
  });

  it("does not run for a duplicate or an invalid notification", async () => {
    const onAny = vi.fn();
    const send = receiverWith({ onAny });
    const body = notification();
    await send(body);
    expect((await send(body)).answer.message).toBe("already processed");
    expect((await send({ ...body, id: "other", resource: {} })).status).toBe(400);
    expect(onAny).toHaveBeenCalledTimes(1);
  });

  it("fails the notification when it throws (500, retried), and the redelivery runs both again", async () => {
    const onRenew = vi.fn();
    const onAny = vi.fn().mockRejectedValueOnce(new Error("audit log down")).mockResolvedValue(undefined);
    const send = receiverWith({ onRenew, onAny });
    const body = notification();
    expect(await send(body)).toEqual({ status: 500, answer: { processed: false, message: "handler failed" } });
    expect(await send(body)).toEqual({ status: 200, answer: { processed: true, message: "processed" } });
    expect(onRenew).toHaveBeenCalledTimes(2);
    expect(onAny.mock.calls.map(([, ctx]) => ctx.attempt)).toEqual([1, 2]);
  });

  it("is not run when the typed handler throws", async () => {
    const onAny = vi.fn();
    const send = receiverWith({ onRenew: () => Promise.reject(new Error("db down")), onAny });
    expect((await send(notification())).status).toBe(500);
    expect(onAny).not.toHaveBeenCalled();
  });
});

describe("onError", () => {
  it("gets the error, the notification and ctx when a handler throws, and the answer stays 500", async () => {
    const failure = new Error("db down");
    const onError = vi.fn();
    const send = receiverWith({ onRenew: () => Promise.reject(failure), onError });
    const body = notification();
    expect(await send(body)).toEqual({ status: 500, answer: { processed: false, message: "handler failed" } });
    expect(onError).toHaveBeenCalledTimes(1);
    const [err, given, ctx] = onError.mock.calls[0]!;
    expect(err).toBe(failure);
    expect(given).toEqual(body);
    expect(ctx).toMatchObject({ id: body.id, attempt: 1, eventType: "SUBSCRIPTION_RENEW" });
  });

  it("gets a HandlerTimeoutError when the handler outlives handlerTimeoutMs", async () => {
    const onError = vi.fn();
    const send = receiverWith({ handlerTimeoutMs: 50, onRenew: () => new Promise(() => {}), onError });
    expect(await send(notification())).toEqual({
      status: 500,
      answer: { processed: false, message: "handler timed out" },
    });
    expect(onError.mock.calls[0]![0]).toBeInstanceOf(HandlerTimeoutError);
  });

  it("is called when onAny throws, too", async () => {
    const onError = vi.fn();
    const send = receiverWith({ onAny: () => Promise.reject(new Error("audit log down")), onError });
    expect((await send(notification())).status).toBe(500);
    expect(onError.mock.calls[0]![0]).toMatchObject({ message: "audit log down" });
  });

  it("cannot change the answer or crash anything when it throws itself; its failure is logged", async () => {
    const { logger, lines } = captureLogger();
    const receiver = createReceiver({
      logger,
      onRenew: () => Promise.reject(new Error("db down")),
      onError: () => Promise.reject(new Error("pager down")),
    });
    const response = await receiver.handle(post(notification()));
    expect(response.status).toBe(500);
    expect(lines().some((line) => line.msg === "onError hook failed" && line.err?.message === "pager down")).toBe(true);
  });

  it("is not called for a handler that succeeds, nor for bad input", async () => {
    const onError = vi.fn();
    const send = receiverWith({ onRenew: () => {}, onError });
    await send(notification());
    await send({ id: "x" });
    expect(onError).not.toHaveBeenCalled();
  });

  it("also runs for handlers behind an in-process queue", async () => {
    const onError = vi.fn();
    const failed = new Promise<void>((resolve) => onError.mockImplementation(() => resolve()));
    const send = receiverWith({
      queue: inProcessQueue({ concurrency: 1 }),
      onRenew: () => Promise.reject(new Error("later")),
      onError,
    });
    expect((await send(notification())).status).toBe(200);
    await failed;
    expect(onError).toHaveBeenCalledTimes(1);
  });
});
