import { createReceiver, type IdempotencyStore, memoryStore, type ReceiverOptions } from "merchant-webhooks";
import { createWorker } from "merchant-webhooks/bullmq";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";

const start = (options: Partial<ReceiverOptions> & Record<string, unknown>) => () =>
  createReceiver({ logger: silentLogger(), ...options });

/** A store written before lease renewal existed: it cannot extend a claim. */
function storeWithoutRenewal(): IdempotencyStore {
  const { extend: _extend, ...rest } = memoryStore();
  return rest as unknown as IdempotencyStore;
}

describe("options are checked when the receiver is created", () => {
  it("refuses a negative bodyLimit", () => {
    expect(start({ bodyLimit: -1 })).toThrow(/bodyLimit must be a number of 0 or more, got -1/);
  });

  it("refuses a misspelt handler such as onRenewal, naming the handlers there are", () => {
    expect(start({ onRenewal: () => {} })).toThrow(/unknown handler "onRenewal". Did you mean "onRenew"\?/);
  });

  it("refuses a handlerTimeoutMs longer than leaseMs when the store cannot renew the claim", () => {
    expect(start({ idempotency: storeWithoutRenewal(), leaseMs: 1_000, handlerTimeoutMs: 5_000 })).toThrow(
      /exceeds leaseMs/,
    );
  });

  it("accepts a handlerTimeoutMs longer than leaseMs when the store renews the claim", () => {
    expect(start({ leaseMs: 1_000, handlerTimeoutMs: 5_000, onRenew: () => {} })).not.toThrow();
  });

  it("refuses a misspelt handler on a queue worker too, before connecting", () => {
    const worker = () =>
      createWorker({
        connection: "redis://127.0.0.1:1",
        name: "q",
        idempotency: memoryStore(),
        logger: silentLogger(),
        onCancelled: () => {},
      } as never);
    expect(worker).toThrow(/unknown handler "onCancelled"/);
  });
});
