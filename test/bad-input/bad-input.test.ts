import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { createReceiver } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { type BadBody, generateBadBodies } from "./generate-bad-bodies.js";

const BODY_LIMIT = 64 * 1024;
const bodies = generateBadBodies(BODY_LIMIT);
const BAD_INPUT_STATUSES = new Set([400, 413, 415]);

function tally(results: { kind: string; status: number }[]) {
  const byStatus: Record<number, number> = {};
  for (const r of results) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  return byStatus;
}

describe("bad input", () => {
  it("generates at least 10,000 malformed bodies across every family", () => {
    expect(bodies.length).toBeGreaterThanOrEqual(10_000);
    expect(new Set(bodies.map((b) => b.kind))).toEqual(
      new Set([
        "truncated",
        "wrong-type",
        "missing-required",
        "invalid-utf8",
        "not-object",
        "proto-keys",
        "deep-nesting",
        "huge-string",
        "huge-array",
        "oversized",
        "wrong-content-type",
        "random-bytes",
      ]),
    );
  });

  it("answers every one through the core with 4xx JSON processed:false and a message, never running a handler", async () => {
    const handler = vi.fn();
    const receiver = createReceiver({
      logger: silentLogger(),
      bodyLimit: BODY_LIMIT,
      onRenew: handler,
      onUnknown: handler,
    });
    const results: { kind: string; status: number }[] = [];
    for (const bad of bodies) {
      const response = await receiver.handle({
        method: "POST",
        headers: { "content-type": bad.contentType },
        rawBody: bad.body,
      });
      const answer = JSON.parse(response.body);
      if (
        !BAD_INPUT_STATUSES.has(response.status) ||
        answer.processed !== false ||
        typeof answer.message !== "string" ||
        !answer.message
      ) {
        throw new Error(`${bad.kind} #${bodies.indexOf(bad)} answered ${response.status} ${response.body}`);
      }
      results.push({ kind: bad.kind, status: response.status });
    }
    expect(handler).not.toHaveBeenCalled();
    expect(({} as any).x0 ?? ({} as any).execution_phase).toBeUndefined();
    console.log(
      `bad input through the core: ${results.length} bodies, answers by status ${JSON.stringify(tally(results))}`,
    );
  }, 120_000);

  describe("over HTTP through the Express adapter", () => {
    let server: http.Server;
    let port: number;
    const handler = vi.fn();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

    beforeAll(async () => {
      const app = express();
      app.post(
        "/hook",
        subscriptionWebhook({ logger: silentLogger(), bodyLimit: BODY_LIMIT, onRenew: handler, onUnknown: handler }),
      );
      server = app.listen(0);
      await new Promise((resolve) => server.once("listening", resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => {
      agent.destroy();
      server.close();
    });

    function send(bad: BadBody, chunked: boolean): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const headers: Record<string, string | number> = { "content-type": bad.contentType };
        if (!chunked) headers["content-length"] = bad.body.byteLength;
        const req = http.request({ port, path: "/hook", method: "POST", headers, agent }, (res) => {
          let text = "";
          res
            .setEncoding("utf8")
            .on("data", (c) => (text += c))
            .on("end", () => resolve({ status: res.statusCode!, body: text }));
        });
        // An oversized body may be answered (and the socket closed) before it is all written.
        req.on("error", (err: NodeJS.ErrnoException) =>
          err.code === "EPIPE" || err.code === "ECONNRESET" ? undefined : reject(err),
        );
        req.end(bad.body);
      });
    }

    it("answers a sample of every family (streamed and with Content-Length) with 4xx JSON processed:false", async () => {
      const sample = bodies.filter(
        (_, i) => i % 7 === 0 || bodies[i]!.kind === "oversized" || bodies[i]!.kind === "deep-nesting",
      );
      const results: { kind: string; status: number }[] = [];
      for (let i = 0; i < sample.length; i += 8) {
        const batch = sample.slice(i, i + 8);
        const answers = await Promise.all(batch.map((bad, k) => send(bad, (i + k) % 2 === 0)));
        answers.forEach((answer, k) => {
          const parsed = JSON.parse(answer.body);
          if (!BAD_INPUT_STATUSES.has(answer.status) || parsed.processed !== false || !parsed.message) {
            throw new Error(`${batch[k]!.kind} answered ${answer.status} ${answer.body}`);
          }
          results.push({ kind: batch[k]!.kind, status: answer.status });
        });
      }
      expect(results.length).toBeGreaterThan(1_500);
      expect(handler).not.toHaveBeenCalled();
      console.log(`bad input over HTTP: ${results.length} bodies, answers by status ${JSON.stringify(tally(results))}`);
    }, 120_000);
  });
});
