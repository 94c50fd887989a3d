import { createReceiver, memoryStore } from "merchant-webhooks";
import { describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

describe("each notification id runs its handler once", () => {
  it("runs the handler once under 20 concurrent duplicates; the others are told to retry (409)", async () => {
    const effects: string[] = [];
    const receiver = createReceiver({
      logger: silentLogger(),
      onRenew: async (n) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        effects.push(n.id);
      },
    });
    const body = json(notification());
    const responses = await Promise.all(Array.from({ length: 20 }, () => receiver.handle(post(body))));
    const statuses = responses.map((r) => r.status).sort();
    expect(effects).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    // The sender's retries after the first completes are acknowledged without another run.
    const retried = await Promise.all(Array.from({ length: 19 }, () => receiver.handle(post(body))));
    expect(retried.every((r) => r.status === 200 && JSON.parse(r.body).processed === true)).toBe(true);
    expect(effects).toHaveLength(1);
  });

  it("runs a failed notification again on redelivery, with the attempt number", async () => {
    const attempts: number[] = [];
    const onRenew = vi.fn(async (_n: unknown, ctx: { attempt: number }) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) throw new Error("ledger unavailable");
    });
    const receiver = createReceiver({ logger: silentLogger(), onRenew });
    const body = json(notification());
    expect((await receiver.handle(post(body))).status).toBe(500);
    expect((await receiver.handle(post(body))).status).toBe(200);
    expect((await receiver.handle(post(body))).status).toBe(200);
    expect(attempts).toEqual([1, 2]);
  });

  it("runs a timed-out notification again on redelivery, and aborts ctx.signal of the one that timed out", async () => {
    let firstSignal: AbortSignal | undefined;
    const receiver = createReceiver({
      logger: silentLogger(),
      handlerTimeoutMs: 30,
      onRenew: async (_n, ctx) => {
        if (ctx.attempt === 1) {
          firstSignal = ctx.signal;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      },
    });
    const body = json(notification());
    const first = await receiver.handle(post(body));
    expect(first.status).toBe(500);
    expect(firstSignal?.aborted).toBe(true);
    expect(firstSignal?.reason).toMatchObject({ name: "HandlerTimeoutError" });
    expect((await receiver.handle(post(body))).status).toBe(200);
  });

  it("answers processed and retries the completion write when only that write fails", async () => {
    const store = memoryStore();
    const complete = store.complete.bind(store);
    let failures = 1;
    store.complete = (...args) => (failures-- > 0 ? Promise.reject(new Error("blip")) : complete(...args));
    const onRenew = vi.fn();
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, onRenew });
    const body = notification();
    const response = await receiver.handle(post(json(body)));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).processed).toBe(true);
    await vi.waitFor(() => expect(store.get(body.id)).toMatchObject({ state: "completed" }), { timeout: 2000 });
    await receiver.close();
    expect(onRenew).toHaveBeenCalledTimes(1);
  });

  it("gives handlers a context: id, attempt, headers, a live signal and a bound logger", async () => {
    let seen: any;
    const receiver = createReceiver({
      logger: silentLogger(),
      onRenew: (_n, ctx) => {
        seen = {
          id: ctx.id,
          attempt: ctx.attempt,
          header: ctx.headers["x-delivery"],
          aborted: ctx.signal.aborted,
          log: typeof ctx.log.info,
        };
      },
    });
    const body = notification();
    await receiver.handle({
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Delivery": "d-1" },
      rawBody: json(body),
    });
    expect(seen).toEqual({ id: body.id, attempt: 1, header: "d-1", aborted: false, log: "function" });
  });
});
