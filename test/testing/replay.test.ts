import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { createReceiver, hmacVerifier, type ReceiverOptions, standardWebhooksVerifier } from "merchant-webhooks";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { buildNotification, hmacSigner, replay, SourceError, standardWebhooksSigner } from "merchant-webhooks/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../support/capture-logger.js";

const renewal = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "replay-1" });
const cancel = buildNotification("SUBSCRIPTION_CANCELLED", undefined, { seed: "replay-2" });
const invalid = buildNotification("SUBSCRIPTION_SUSPENDED", {
  id: "WH-no-phase",
  resource: { execution_phase: undefined },
});

function handlers() {
  return { onRenew: vi.fn(), onCancel: vi.fn(), onSuspend: vi.fn(), logger: silentLogger() } satisfies ReceiverOptions;
}

const summary = (results: Awaited<ReturnType<typeof replay>>) =>
  results.map((r) => [r.id, r.status, r.answer?.processed]);

const EXPECTED = [
  [renewal.id, 200, true],
  [cancel.id, 200, true],
  ["WH-no-phase", 400, false],
];

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

describe("replay targets", () => {
  it("builds a receiver from options and runs the handlers in-process", async () => {
    const options = handlers();
    const results = await replay(options, [renewal, cancel, invalid]);
    expect(summary(results)).toEqual(EXPECTED);
    expect(results[2]!.answer!.message).toContain("resource.execution_phase");
    expect(options.onRenew.mock.calls[0]![0]).toEqual(renewal);
    expect(options.onCancel.mock.calls[0]![0]).toEqual(cancel);
    expect(options.onSuspend).not.toHaveBeenCalled();
  });

  it("uses a receiver it is given, and leaves it open: a second replay meets the same idempotency record", async () => {
    const options = handlers();
    const receiver = createReceiver(options);
    await replay(receiver, [renewal]);
    const again = await replay(receiver, [renewal]);
    expect(again[0]!.answer).toEqual({ processed: true, message: "already processed" });
    expect(options.onRenew).toHaveBeenCalledTimes(1);
  });

  describe("over HTTP", () => {
    const options = handlers();
    const app = express();
    app.post("/hook", subscriptionWebhook(options));
    const server = createServer(app);
    let base = "";
    beforeAll(async () => {
      base = await listen(server);
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("posts to a URL and reads each answer", async () => {
      const results = await replay(`${base}/hook`, [renewal, cancel, invalid]);
      expect(summary(results)).toEqual(EXPECTED);
      expect(options.onRenew.mock.calls.at(-1)![0]).toEqual(renewal);
    });

    it("leaves a server that is already listening running", async () => {
      const results = await replay(server, [buildNotification("SUBSCRIPTION_RENEW", undefined, { random: true })], {
        path: "/hook",
      });
      expect(results[0]!.status).toBe(200);
      expect(server.listening).toBe(true);
    });

    it("reports a status that is not a webhook answer without an answer", async () => {
      const results = await replay(`${base}/not-the-hook`, [renewal]);
      expect(results[0]).toMatchObject({ id: renewal.id, status: 404 });
      expect(results[0]!.answer).toBeUndefined();
    });
  });

  it("starts an Express app on an ephemeral port for the replay, at the given path", async () => {
    const options = handlers();
    const app = express();
    app.post("/webhooks/subscriptions", subscriptionWebhook(options));
    const results = await replay(app, [renewal, cancel, invalid], { path: "/webhooks/subscriptions" });
    expect(summary(results)).toEqual(EXPECTED);
    expect(options.onCancel).toHaveBeenCalledTimes(1);
  });

  it("starts an http.Server that is not listening, and stops it after", async () => {
    const options = handlers();
    const receiver = createReceiver(options);
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const response = await receiver.handle({
        method: req.method ?? "GET",
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
      });
      res.writeHead(response.status, response.headers).end(response.body);
    });
    const results = await replay(server, [renewal]);
    expect(summary(results)).toEqual([EXPECTED[0]]);
    expect(server.listening).toBe(false);
  });

  it("reports a notification that got no answer with status 0 and the reason", async () => {
    const server = createServer();
    const base = await listen(server);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const results = await replay(`${base}/hook`, [renewal]);
    expect(results[0]).toMatchObject({ id: renewal.id, status: 0 });
    expect(results[0]!.error).toContain("ECONNREFUSED");
  });
});

describe("replay sources", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "mw-replay-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const recorded = (notification: unknown, headers: Record<string, string> = {}) => ({
    received_at: "2026-11-23T08:15:31.000Z",
    headers,
    notification,
    answer: { status: 200, processed: true, message: "processed" },
  });

  it("reads a directory's .json and .jsonl files in name order, each entry with its line, and skips other files", async () => {
    const sub = join(dir, "mixed");
    mkdirSync(sub);
    writeFileSync(join(sub, "a-one.json"), JSON.stringify(renewal, null, 2));
    writeFileSync(join(sub, "b-many.json"), JSON.stringify([cancel, invalid], null, 2));
    writeFileSync(
      join(sub, "c-recorded.jsonl"),
      `${JSON.stringify(recorded(buildNotification("SUBSCRIPTION_RESUMED")))}\n`,
    );
    writeFileSync(join(sub, "notes.md"), "# not a source\n");
    const options = { ...handlers(), onResume: vi.fn() };
    const results = await replay(options, sub);
    expect(results.map((r) => r.id)).toEqual([renewal.id, cancel.id, "WH-no-phase", "WH-TEST-SUBSCRIPTION_RESUMED"]);
    expect(results.map((r) => r.origin)).toEqual([
      `${join(sub, "a-one.json")}:1`,
      `${join(sub, "b-many.json")}:2`,
      `${join(sub, "b-many.json")}:${2 + JSON.stringify(cancel, null, 2).split("\n").length}`,
      `${join(sub, "c-recorded.jsonl")}:1`,
    ]);
    expect(options.onResume).toHaveBeenCalledTimes(1);
  });

  it("reads a JSON Lines file of notifications and recorded entries, sending the recorded headers again", async () => {
    const file = join(dir, "mixed.jsonl");
    const lines = [
      JSON.stringify(
        recorded(renewal, {
          "content-type": "application/json",
          "x-request-id": "req-7",
          host: "old.example",
          "content-length": "9999",
        }),
      ),
      "",
      JSON.stringify(cancel),
    ];
    writeFileSync(file, `${lines.join("\n")}\n`);
    const options = handlers();
    const app = express();
    app.post("/", subscriptionWebhook(options));
    const results = await replay(app, file);
    expect(results.map((r) => [r.origin, r.status])).toEqual([
      [`${file}:1`, 200],
      [`${file}:3`, 200],
    ]);
    const ctx = options.onRenew.mock.calls[0]![1];
    expect(ctx.headers["x-request-id"]).toBe("req-7");
    expect(ctx.headers.host).not.toBe("old.example");
  });

  it("sends the rest after a line nested 200,000 levels deep, and says why that one was not sent", async () => {
    const file = join(dir, "deep.jsonl");
    const before = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "deep-1" });
    const after = buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: "deep-2" });
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    writeFileSync(file, `${JSON.stringify(before)}\n${deep}\n${JSON.stringify(after)}\n`);
    const options = handlers();
    const results = await replay(options, file);
    expect(results.map((r) => [r.origin, r.status, r.error])).toEqual([
      [`${file}:1`, 200, undefined],
      [`${file}:2`, 0, "not sent: nested deeper than 1000 levels (a notification nests about 8)"],
      [`${file}:3`, 200, undefined],
    ]);
    expect(options.onRenew.mock.calls.map(([n]) => n.id)).toEqual([before.id, after.id]);
  });

  it("names the file and line of a line that is not JSON, before sending anything", async () => {
    const file = join(dir, "broken.jsonl");
    writeFileSync(file, `${JSON.stringify(renewal)}\n{"id": "WH-cut-off"\n`);
    const options = handlers();
    const error = await replay(options, file).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SourceError);
    expect((error as Error).message).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:2: invalid JSON`),
    );
    expect(options.onRenew).not.toHaveBeenCalled();
  });
});

describe("replay options", () => {
  it("sends one at a time in source order by default, and up to `concurrency` at once when asked", async () => {
    const notifications = Array.from({ length: 8 }, (_, i) =>
      buildNotification("SUBSCRIPTION_RENEW", undefined, { seed: `c-${i}` }),
    );
    const run = async (concurrency?: number) => {
      let inFlight = 0;
      let most = 0;
      const order: string[] = [];
      const onRenew = async (n: { id: string }) => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setTimeout(resolve, 15));
        order.push(n.id);
        inFlight--;
      };
      const done: number[] = [];
      const results = await replay({ onRenew, logger: silentLogger() }, notifications, {
        ...(concurrency ? { concurrency } : {}),
        onResult: (_r, count) => done.push(count),
      });
      return { most, order, results, done };
    };
    const serial = await run();
    expect(serial.most).toBe(1);
    expect(serial.order).toEqual(notifications.map((n) => n.id));
    expect(serial.done).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const parallel = await run(3);
    expect(parallel.most).toBe(3);
    expect(parallel.results.map((r) => r.id)).toEqual(notifications.map((n) => n.id)); // results stay in source order
    await expect(replay({}, [renewal], { concurrency: 0 })).rejects.toThrow("concurrency");
  });

  it("adds the headers `sign` returns for each body, so a verifying receiver accepts the replay", async () => {
    const verify = (raw: Uint8Array, headers: Readonly<Record<string, string>>) =>
      headers["x-test-length"] === String(raw.byteLength);
    const options = { ...handlers(), verify };
    const unsigned = await replay(options, [renewal]);
    expect(unsigned[0]!.status).toBe(401);
    const signed = await replay(options, [renewal], {
      sign: (body) => ({ "x-test-length": String(Buffer.byteLength(body)) }),
    });
    expect(signed[0]!.status).toBe(200);
    expect(options.onRenew).toHaveBeenCalledTimes(1);
  });

  it("signs for the shipped HMAC verifier, timestamp included, with the options the verifier takes", async () => {
    const hmac = {
      secret: "shared-secret-0123456789",
      header: "X-Signature",
      prefix: "sha256=",
      timestamp: { header: "x-timestamp" },
    };
    const options = { ...handlers(), verify: hmacVerifier(hmac) };
    const [wrong] = await replay(options, [renewal], { sign: hmacSigner({ ...hmac, secret: "another-secret" }) });
    expect(wrong!.status).toBe(401);
    const [signed] = await replay(options, [renewal], { sign: hmacSigner(hmac) });
    expect(signed!.status).toBe(200);
    expect(options.onRenew).toHaveBeenCalledTimes(1);
  });

  it("signs for the shipped Standard Webhooks verifier", async () => {
    const secret = `whsec_${Buffer.from("a standard webhooks test key").toString("base64")}`;
    const options = { ...handlers(), verify: standardWebhooksVerifier(secret) };
    const [wrong] = await replay(options, [renewal], {
      sign: standardWebhooksSigner(`whsec_${Buffer.from("another key").toString("base64")}`),
    });
    expect(wrong!.status).toBe(401);
    const [signed] = await replay(options, [renewal], { sign: standardWebhooksSigner(secret) });
    expect(signed!.status).toBe(200);
    expect(options.onRenew.mock.calls[0]![1].headers["webhook-id"]).toMatch(/^msg_/);
  });
});
