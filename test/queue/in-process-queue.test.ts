import { createReceiver, inProcessQueue, memoryStore } from "merchant-webhooks";
import { describe, expect, it, vi } from "vitest";
import { captureLogger, silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";

const post = (body: Uint8Array) => ({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });

/** A handler that waits until the test opens the gate. */
function gated() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const calls: string[] = [];
  const handler = vi.fn(async (n: { id: string }) => {
    await gate;
    calls.push(n.id);
  });
  return { handler, calls, open };
}

describe("inProcessQueue", () => {
  it("acknowledges before the handler runs, then runs it once", async () => {
    const { handler, calls, open } = gated();
    const store = memoryStore();
    const queue = inProcessQueue({ concurrency: 2 });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, onRenew: handler });
    const body = notification();
    const response = await receiver.handle(post(json(body)));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ processed: true, message: "accepted for processing" });
    expect(calls).toEqual([]);
    // a duplicate while it waits is told to retry, not run twice
    expect((await receiver.handle(post(json(body)))).status).toBe(409);
    open();
    await queue.close();
    expect(calls).toEqual([body.id]);
    expect(store.get(body.id)).toMatchObject({ state: "completed" });
    expect(JSON.parse((await receiver.handle(post(json(body)))).body)).toEqual({
      processed: true,
      message: "already processed",
    });
  });

  it("sheds load with 503 and Retry-After at maxPending, leaving no claim behind", async () => {
    const { handler, calls, open } = gated();
    const store = memoryStore();
    const queue = inProcessQueue({ concurrency: 1, maxPending: 3 });
    const receiver = createReceiver({ logger: silentLogger(), idempotency: store, queue, onRenew: handler });
    const bodies = Array.from({ length: 6 }, () => notification());
    const statuses = [];
    for (const body of bodies) statuses.push((await receiver.handle(post(json(body)))).status);
    // one running, three waiting, the rest refused
    expect(statuses).toEqual([200, 200, 200, 200, 503, 503]);
    const refused = await receiver.handle(post(json(bodies[5]!)));
    expect(refused.headers["retry-after"]).toBe("5");
    expect(JSON.parse(refused.body)).toEqual({ processed: false, message: "overloaded; retry later" });
    expect(store.get(bodies[4]!.id)).toBeUndefined();
    open();
    await queue.close();
    expect(calls.sort()).toEqual(
      bodies
        .slice(0, 4)
        .map((b) => b.id)
        .sort(),
    );
  });

  it("drains accepted notifications on close and refuses new ones while closing", async () => {
    const { handler, calls, open } = gated();
    const queue = inProcessQueue({ concurrency: 1 });
    const receiver = createReceiver({ logger: silentLogger(), queue, onRenew: handler });
    await receiver.handle(post(json(notification())));
    await receiver.handle(post(json(notification())));
    const closed = queue.close();
    expect((await receiver.handle(post(json(notification())))).status).toBe(503);
    open();
    await closed;
    expect(calls).toHaveLength(2);
    expect(queue.size).toBe(0);
  });

  it("records a failed queued handler so the redelivery runs it again", async () => {
    const store = memoryStore();
    const queue = inProcessQueue();
    let attempts = 0;
    const receiver = createReceiver({
      logger: silentLogger(),
      idempotency: store,
      queue,
      onRenew: () => {
        if (++attempts === 1) throw new Error("first try fails");
      },
    });
    const body = notification();
    expect((await receiver.handle(post(json(body)))).status).toBe(200);
    await vi.waitFor(() => expect(store.get(body.id)).toMatchObject({ state: "failed" }));
    expect((await receiver.handle(post(json(body)))).status).toBe(200);
    await queue.close();
    expect(store.get(body.id)).toMatchObject({ state: "completed", attempts: 2 });
  });
});

describe("backpressure for synchronous handling", () => {
  it("runs at most `concurrency` handlers at once and answers 503 past maxPending", async () => {
    const { handler, open } = gated();
    let running = 0;
    let peak = 0;
    const onRenew = async (n: { id: string }) => {
      running++;
      peak = Math.max(peak, running);
      await handler(n);
      running--;
    };
    const receiver = createReceiver({
      logger: silentLogger(),
      backpressure: { concurrency: 2, maxPending: 2 },
      onRenew,
    });
    const inFlight = Array.from({ length: 4 }, () => receiver.handle(post(json(notification()))));
    await vi.waitFor(() => expect(running).toBe(2));
    const shed = await receiver.handle(post(json(notification())));
    expect(shed.status).toBe(503);
    expect(JSON.parse(shed.body).message).toBe("overloaded; retry later");
    open();
    const answers = await Promise.all(inFlight);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(peak).toBe(2);
  });

  it("logs a handler that fails after the 200 was sent, as not processed", async () => {
    const { logger, lines } = captureLogger();
    const queue = inProcessQueue();
    const receiver = createReceiver({ logger, queue, onRenew: () => Promise.reject(new Error("ledger down")) });
    const body = notification();
    expect((await receiver.handle(post(json(body)))).status).toBe(200);
    await queue.close();
    expect(lines()).toContainEqual(
      expect.objectContaining({
        level: 50,
        notification_id: body.id,
        outcome: "handler_failed",
        msg: "notification not processed",
      }),
    );
  });
});

describe("inProcessQueue's options", () => {
  it.each([
    [{ concurency: 4 }, "MW_UNKNOWN_OPTION", "concurency", /Did you mean "concurrency"\?/],
    [{ maxPendng: 5 }, "MW_UNKNOWN_OPTION", "maxPendng", /Did you mean "maxPending"\?/],
    [{ concurrency: 0 }, "MW_INVALID_OPTION", "concurrency", /1 or more/],
    [{ maxPending: -1 }, "MW_INVALID_OPTION", "maxPending", /0 or more/],
  ])("refuses %o at construction with its code and option", (options, code, option, message) => {
    expect(() => inProcessQueue(options as never)).toThrow(
      expect.objectContaining({ code, option, message: expect.stringMatching(message) }),
    );
  });
});
