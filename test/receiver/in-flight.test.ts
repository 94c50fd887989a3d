import { createReceiver, memoryStore } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";
import { notification, post } from "../support/notifications.js";

describe("notifications in flight: counted, shown, and shed past backpressure.maxInFlight", () => {
  it("answers 503 overloaded with Retry-After past the limit, claims nothing for it, and takes it later", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const ran: string[] = [];
    const store = memoryStore();
    const { logger, lines } = captureLogger();
    const receiver = createReceiver({
      idempotency: store,
      logger,
      backpressure: { maxInFlight: 3 },
      onRenew: async (n) => {
        await gate;
        ran.push(n.id);
      },
    });
    const held = Array.from({ length: 3 }, () => notification());
    const answers = held.map((body) => receiver.handle(post(body)));
    await expect.poll(async () => (await store.get(held[2]!.id))?.state).toBe("processing");
    expect(await receiver.health()).toMatchObject({ ok: true, inFlight: 3, maxInFlight: 3 });

    const extra = notification();
    const shed = await receiver.handle(post(extra));
    expect(shed.status).toBe(503);
    expect(JSON.parse(shed.body)).toEqual({ processed: false, message: "overloaded; retry later" });
    expect(shed.headers["retry-after"]).toBe("5");
    expect(await store.get(extra.id)).toBeUndefined();
    expect(lines().at(-1)).toMatchObject({ notification_id: extra.id, reason: "backpressure", in_flight: 3 });

    open();
    expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(await receiver.health()).toMatchObject({ inFlight: 0 });
    // The sender's retry is taken once the others are answered, and runs once.
    expect((await receiver.handle(post(extra))).status).toBe(200);
    expect(ran.sort()).toEqual([...held.map((body) => body.id), extra.id].sort());
    // Each line counts the others still in flight when it was written.
    const handled = lines().filter((line) => line.msg === "notification handled");
    expect(handled).toHaveLength(4);
    expect(handled.every((line) => Number.isInteger(line.in_flight) && line.in_flight < 3)).toBe(true);
  });

  it("refuses a limit of 0 or below at start", () => {
    expect(() => createReceiver({ backpressure: { maxInFlight: 0 } })).toThrow(/maxInFlight must be at least 1/);
    expect(() => createReceiver({ backpressure: { maxInFlight: -1 } })).toThrow(RangeError);
  });
});
