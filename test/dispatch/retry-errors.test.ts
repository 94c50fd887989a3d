import { MerchantWebhooksError, NonRetriableError, RetryAfterError } from "merchant-webhooks";
import { describe, expect, it } from "vitest";
import { failureOutcome, retryDecision } from "../../src/dispatch/retry-decision.js";
import { HandlerTimeoutError } from "../../src/dispatch/run-claimed.js";

describe("the errors a handler steers its retries with", () => {
  it("are the package's errors, with their codes and causes", () => {
    const cause = new Error("404 from the account service");
    const refused = new NonRetriableError("no account", { cause });
    expect(refused).toBeInstanceOf(MerchantWebhooksError);
    expect(refused).toMatchObject({
      name: "NonRetriableError",
      code: "MW_NON_RETRIABLE",
      message: "no account",
      cause,
    });
    const later = new RetryAfterError("rate limited", 1_500);
    expect(later).toMatchObject({ name: "RetryAfterError", code: "MW_RETRY_AFTER", retryAfterMs: 1_500 });
  });

  it("RetryAfterError takes a Date, rounds up, takes a time past as now, refuses what is not a time", () => {
    const inAMinute = new RetryAfterError("later", new Date(Date.now() + 60_000)).retryAfterMs;
    expect(inAMinute).toBeGreaterThan(59_000);
    expect(inAMinute).toBeLessThanOrEqual(60_000);
    expect(new RetryAfterError("later", 0.2).retryAfterMs).toBe(1);
    expect(new RetryAfterError("later", -5).retryAfterMs).toBe(0);
    expect(new RetryAfterError("later", new Date(0)).retryAfterMs).toBe(0);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, "5" as unknown as number, new Date("nope")])
      expect(() => new RetryAfterError("later", bad)).toThrow(
        expect.objectContaining({ name: "RangeError", code: "MW_INVALID_ARGUMENT" }),
      );
  });

  it("decide how every runner retries a failure, in one place", () => {
    expect(retryDecision(new NonRetriableError("no"))).toEqual({ retry: "never" });
    expect(retryDecision(new RetryAfterError("later", 250))).toEqual({ retry: "after", delayMs: 250 });
    for (const other of [new Error("down"), new HandlerTimeoutError(10), "a string", undefined])
      expect(retryDecision(other)).toEqual({ retry: "as_usual" });
    expect(failureOutcome(new NonRetriableError("no"))).toBe("handler_refused");
    expect(failureOutcome(new RetryAfterError("later", 1))).toBe("handler_retry_later");
    expect(failureOutcome(new Error("down"))).toBe("handler_failed");
  });
});
