import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { CallTimeoutError, callDeadlines } from "../../src/redis/call-deadlines.js";
import { REDIS_URL } from "../support/redis.js";

const never = () => new Promise<never>(() => {});

describe("callDeadlines: one timer for every call of a connection", () => {
  it("passes on the task's value or error when it settles in time", async () => {
    const beforeDeadline = callDeadlines();
    await expect(beforeDeadline(Promise.resolve("OK"), performance.now() + 1_000)).resolves.toBe("OK");
    await expect(beforeDeadline(Promise.reject(new Error("NOSCRIPT")), performance.now() + 1_000)).rejects.toThrow(
      "NOSCRIPT",
    );
  });

  it("rejects with CallTimeoutError a task that has not settled by its deadline, and ignores its late answer", async () => {
    const beforeDeadline = callDeadlines();
    let answer!: (value: string) => void;
    const late = beforeDeadline(new Promise<string>((resolve) => (answer = resolve)), performance.now() + 10);
    await expect(late).rejects.toBeInstanceOf(CallTimeoutError);
    answer("too late");
    await expect(late).rejects.toBeInstanceOf(CallTimeoutError);
  });

  it("expires a call made later with an earlier deadline without waiting for the calls ahead of it", async () => {
    const beforeDeadline = callDeadlines();
    let first!: (value: string) => void;
    const slow = beforeDeadline(new Promise<string>((resolve) => (first = resolve)), performance.now() + 60_000);
    await expect(beforeDeadline(never(), performance.now() + 10)).rejects.toBeInstanceOf(CallTimeoutError);
    first("answered");
    await expect(slow).resolves.toBe("answered");
  });

  it("expires every call still waiting when their deadlines pass, each once", async () => {
    const beforeDeadline = callDeadlines();
    const calls = Array.from({ length: 5 }, (_, i) => beforeDeadline(never(), performance.now() + 5 + i));
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(5).fill("rejected"));
  });

  it("fails a watched command past its deadline, once, and leaves one settled in time alone", async () => {
    const deadlines = callDeadlines();
    const rejected: Error[] = [];
    const silent = { reject: (error: Error) => rejected.push(error) };
    const answered = { reject: (error: Error) => rejected.push(error) };
    deadlines.watch(silent, performance.now() + 10);
    const inTime = deadlines.watch(answered, performance.now() + 10);
    inTime.settled = true;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toBeInstanceOf(CallTimeoutError);
  });

  it("keeps working for calls made one at a time, each after the last settled", async () => {
    const beforeDeadline = callDeadlines();
    for (let i = 0; i < 50; i++) {
      await expect(beforeDeadline(Promise.resolve(i), performance.now() + 1_000)).resolves.toBe(i);
    }
    // The timer set for the first call's deadline (a second away) must not hold back a nearer one.
    const started = performance.now();
    await expect(beforeDeadline(never(), performance.now() + 10)).rejects.toBeInstanceOf(CallTimeoutError);
    expect(performance.now() - started).toBeLessThan(500);
  });

  describe("this process's own event-loop delay does not count against the deadline", () => {
    /** Hold the event loop as a burst of requests or a starved CPU would. */
    const stall = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {}
    };

    it("takes an answer that came while the loop was held past the deadline, unread in the socket", async () => {
      const redis = new Redis(REDIS_URL);
      await redis.ping();
      try {
        const beforeDeadline = callDeadlines();
        // Sent now; Redis answers at once, but nothing here reads the socket until the stall ends,
        // and timers run before sockets are read.
        const call = beforeDeadline(redis.ping(), performance.now() + 50);
        stall(300);
        await expect(call).resolves.toBe("PONG");
      } finally {
        redis.disconnect();
      }
    });

    it("still ends a call that gets no answer at all, the delay left out only up to maxLagMs", async () => {
      const beforeDeadline = callDeadlines(40);
      const call = beforeDeadline(never(), performance.now() + 20);
      stall(300);
      await expect(call).rejects.toThrow(
        /no answer within the time limit \(plus \d+ ms of this process's event-loop delay/,
      );
    });
  });
});
