import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, freePort, type OwnRedisServer, ownRedisServer, uniquePrefix } from "../support/redis.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The queue example's receiver (Redis store, BullMQ queue) on a Redis of the test's own, checked the way
 * a load balancer checks it: GET /healthz with a one-second limit on the answer.
 */
describe("examples/queue-worker receiver GET /healthz", () => {
  let redis: OwnRedisServer;
  let child: ChildProcess;
  let healthz: string;

  beforeAll(async () => {
    redis = await ownRedisServer();
    const port = await freePort();
    healthz = `http://127.0.0.1:${port}/healthz`;
    child = spawn(process.execPath, ["--import", "tsx", "examples/queue-worker/receiver.ts"], {
      cwd: root,
      env: {
        ...process.env,
        REDIS_URL: redis.url,
        PORT: String(port),
        QUEUE_NAME: uniquePrefix("healthz").slice(0, -1),
      },
      stdio: "ignore",
    });
    await eventually(
      async () => (await fetch(healthz).catch(() => undefined))?.ok,
      30_000,
      "the example to answer 200 on /healthz",
    );
  }, 60_000);

  afterAll(async () => {
    child?.kill("SIGKILL");
    await redis?.stop();
  });

  const check = () => fetch(healthz, { signal: AbortSignal.timeout(1_000) });

  it("answers 200 with the store and the queue up", async () => {
    const response = await check();
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ok: true,
      store: "up",
      queue: "up",
      storeAddress: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      inFlight: 0,
      maxInFlight: 1000,
    });
  });

  it("answers 503 within one second once Redis is stopped", async () => {
    await redis.stop();
    const response = await check();
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({
      ok: false,
      store: "down",
      queue: "down",
      storeAddress: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
  });
});
