import { createServer } from "node:net";
import { createReceiver } from "merchant-webhooks";
import { redisStore } from "merchant-webhooks/redis";
import { afterEach, describe, expect, it } from "vitest";
import { captureLogger } from "../support/capture-logger.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A port nothing listens on: bound, then released. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("the store's connection state is logged with its address, never its password", () => {
  it("unreachable at start: one warning at start, one 'unreachable' line however many retries, health says since when", async () => {
    const port = await deadPort();
    const store = redisStore({ connection: `redis://:hunter2-password@127.0.0.1:${port}` });
    const { logger, lines, text } = captureLogger();
    const receiver = createReceiver({ logger, idempotency: store, onRenew: () => {} });
    closing.push(
      () => receiver.close(),
      () => store.close(),
    );

    expect(store.connection?.address).toBe(`127.0.0.1:${port}`);

    await until(() => lines().some((line) => /unreachable at start/.test(line.msg)), "the start-up warning");
    const [atStart] = lines().filter((line) => /unreachable at start/.test(line.msg));
    expect(atStart).toMatchObject({ level: 40, address: `127.0.0.1:${port}` });
    expect(atStart!.msg).toBe(
      `idempotency store unreachable at start (127.0.0.1:${port}): notifications get 503 until it is back`,
    );

    // ioredis retries every few hundred ms; let several retries pass.
    const started = Date.now();
    await until(() => Date.now() - started > 1_500, "retries");
    const reconnects = lines().filter((line) => line.msg === "redis unreachable; reconnecting").length;
    expect(reconnects).toBe(1);
    expect(lines().filter((line) => /unreachable at start/.test(line.msg))).toHaveLength(1);
    const down = lines().find((line) => line.msg === "redis unreachable; reconnecting")!;
    expect(down).toMatchObject({ level: 40, store: "redisStore", address: `127.0.0.1:${port}` });
    expect(down.err).toMatch(/ECONNREFUSED/);

    const health = await receiver.health({ timeoutMs: 200 });
    expect(health).toMatchObject({ ok: false, store: "down", storeAddress: `127.0.0.1:${port}` });
    expect(Date.parse(health.storeDownSince!)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(health.storeDownSince!)).toBeGreaterThan(started - 60_000);

    expect(text()).not.toContain("hunter2");
  });

  it("reachable: connected and ready are logged, no warning, health has no down-since", async () => {
    const store = redisStore({ connection: REDIS_URL });
    const { logger, lines } = captureLogger();
    const receiver = createReceiver({ logger, idempotency: store, onRenew: () => {} });
    closing.push(
      () => receiver.close(),
      () => store.close(),
    );
    await until(() => lines().some((line) => line.msg === "redis ready"), "ready");
    const address = new URL(REDIS_URL);
    expect(lines().find((line) => line.msg === "redis ready")).toMatchObject({
      level: 30,
      address: `${address.hostname}:${address.port || 6379}`,
    });
    const health = await receiver.health({ timeoutMs: 2_000 });
    expect(health.ok).toBe(true);
    expect(health.storeDownSince).toBeUndefined();
    expect(lines().some((line) => line.level >= 40)).toBe(false);
  });
});
