import { createServer } from "node:http";
import express from "express";
import { Redis } from "ioredis";
import { memoryStore } from "merchant-webhooks";
import { createWorker } from "merchant-webhooks/bullmq";
import { consoleHandler } from "merchant-webhooks/console";
import { serveConsole } from "merchant-webhooks/express";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { json, notification } from "../support/notifications.js";
import { eventually, REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { consoleSession, readable } from "./console-session.js";
import { consoleRig } from "./rig.js";

describe("redriving selected dead letters behind express.urlencoded()", () => {
  const prefix = uniquePrefix("console-selected");
  const redis = new Redis(REDIS_URL);
  const store = memoryStore();
  const { receiver, queue, admin } = consoleRig(store, { name: "selected", prefix }, { ordering: false });
  const runs = new Map<string, number>();
  let broken = true;
  const worker = createWorker({
    connection: REDIS_URL,
    name: "selected",
    prefix,
    idempotency: store,
    logger: silentLogger(),
    onRenew: async (n) => {
      runs.set(n.id, (runs.get(n.id) ?? 0) + 1);
      if (broken) throw new Error("ledger refused");
    },
  });
  const app = express();
  // A body parser the app runs for its own forms: it reads the console's form first.
  app.use(express.urlencoded({ extended: true }));
  app.use(
    serveConsole(
      consoleHandler({ admin, authorize: (request) => request.headers.get("authorization") === "Bearer ops" }),
    ),
  );
  const server = createServer(app);

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await worker.close({ timeoutMs: 2_000 });
    await receiver.close();
    await queue.close();
    await removeKeys(redis, prefix);
    redis.disconnect();
  });

  it("redrives both of two selected ids, each once", async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const bodies = [notification(), notification()];
    for (const body of bodies)
      expect(
        (
          await receiver.handle({
            method: "POST",
            headers: { "content-type": "application/json" },
            rawBody: json(body),
          })
        ).status,
      ).toBe(200);
    await eventually(
      async () => (await Promise.all(bodies.map((body) => store.get(body.id)))).every((r) => r?.state === "failed"),
      20_000,
      "two dead letters",
    );

    const overHttp = Object.assign((request: Request) => fetch(request, { redirect: "manual" }), {
      basePath: "/console",
    });
    const ops = consoleSession(overHttp, origin);
    await ops.get("/console/dead-letters");
    broken = false;
    const answer = await ops.post("/console/actions/redrive", [
      ["mode", "ids"],
      ["id", bodies[0]!.id],
      ["id", bodies[1]!.id],
    ]);
    expect(answer.status).toBe(200);
    expect(readable(answer.text)).toContain("redriven 2 of 2");
    await eventually(
      async () => (await Promise.all(bodies.map((body) => store.get(body.id)))).every((r) => r?.state === "completed"),
      20_000,
      "both redriven",
    );
    for (const body of bodies) expect(runs.get(body.id)).toBe(2);
  }, 60_000);
});
