import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { buildNotification, replay } from "merchant-webhooks/testing";
import { afterEach, describe, expect, it } from "vitest";

/** An endpoint answering from `answers` in turn (the last repeats), noting when each request came. */
async function endpoint(answers: readonly { status: number; retryAfter?: string; processed: boolean }[]) {
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      arrivals.push(performance.now());
      const answer = answers[Math.min(arrivals.length - 1, answers.length - 1)]!;
      res.writeHead(answer.status, {
        "content-type": "application/json",
        ...(answer.retryAfter ? { "retry-after": answer.retryAfter } : {}),
      });
      res.end(JSON.stringify({ processed: answer.processed, message: answer.processed ? "processed" : "later" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url, arrivals, close };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
const renewal = () => [buildNotification("SUBSCRIPTION_RENEW", undefined, { random: true })];

describe("replay with retry", () => {
  it("waits the answer's Retry-After before sending again, then reports the processed answer", async () => {
    const server = await endpoint([
      { status: 503, retryAfter: "1", processed: false },
      { status: 200, processed: true },
    ]);
    closers.push(server.close);
    const [result] = await replay(server.url, renewal(), { retry: { attempts: 3 } });
    expect(result).toMatchObject({ status: 200, answer: { processed: true }, attempts: 2 });
    expect(server.arrivals).toHaveLength(2);
    expect(server.arrivals[1]! - server.arrivals[0]!).toBeGreaterThanOrEqual(950);
  });

  it("is bounded: stops after its attempts, and never waits longer than maxWaitMs whatever Retry-After asks", async () => {
    const server = await endpoint([{ status: 429, retryAfter: "3600", processed: false }]);
    closers.push(server.close);
    const started = performance.now();
    const [result] = await replay(server.url, renewal(), { retry: { attempts: 2, maxWaitMs: 50 } });
    expect(result).toMatchObject({ status: 429, attempts: 3 });
    expect(server.arrivals).toHaveLength(3);
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it("does not send again an answer that a retry cannot change (401, 400, 422)", async () => {
    const server = await endpoint([{ status: 401, processed: false }]);
    closers.push(server.close);
    const [result] = await replay(server.url, renewal(), { retry: { attempts: 5 } });
    expect(result!.status).toBe(401);
    expect(result!.attempts).toBeUndefined();
    expect(server.arrivals).toHaveLength(1);
  });

  it("refuses a retry that is not a whole number of attempts", async () => {
    await expect(replay("http://127.0.0.1:1/hook", renewal(), { retry: { attempts: -1 } })).rejects.toThrow(
      "retry.attempts must be a whole number, 0 or more, got -1",
    );
  });
});
