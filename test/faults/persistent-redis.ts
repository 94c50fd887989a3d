import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, sleep } from "../support/redis.js";

/**
 * A redis-server of the test's own that keeps its data across a restart.
 *
 * Why persistence: a Redis that restarts empty forgets every idempotency record, and a redelivery of a
 * notification completed before the restart would then rightly run its handler again. That duplicate
 * comes from the Redis configuration, not from the library, so the fault suite runs the store's Redis
 * as production should: append-only file fsynced on every write, in a directory that outlives the
 * process. A record Redis acknowledged is then on disk, and `stop` (SIGTERM: Redis shuts down
 * gracefully, flushing the AOF) followed by `start` (same port, same directory) brings every record back.
 */
export interface PersistentRedis {
  readonly url: string;
  readonly port: number;
  /** Shut the server down gracefully (SIGTERM) and wait until the process is gone. */
  stop(): Promise<void>;
  /** Start it again on the same port and directory; resolves once it has loaded its data and answers. */
  start(): Promise<void>;
  /** SIGSTOP: connections stay open but nothing is answered, as a hung server. */
  freeze(): void;
  thaw(): void;
  /** Stop the server for good and remove its directory. */
  destroy(): Promise<void>;
}

const isRunning = (child: ChildProcess | undefined): child is ChildProcess =>
  child !== undefined && child.exitCode === null && child.signalCode === null;

/** Resolves true once a client gets past Redis's ready check (the AOF is loaded), false if the process exits first. */
async function answers(port: number, child: ChildProcess, timeoutMs = 15_000): Promise<boolean> {
  const exited = new Promise<false>((resolve) => {
    if (!isRunning(child)) resolve(false);
    child.once("exit", () => resolve(false));
  });
  const ready = (async () => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && isRunning(child)) {
      const probe = new Redis({
        port,
        host: "127.0.0.1",
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on("error", () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === "PONG";
      } catch {
        await sleep(25);
      } finally {
        probe.disconnect();
      }
    }
    return false;
  })();
  return Promise.race([ready, exited]);
}

export async function persistentRedis(): Promise<PersistentRedis> {
  const dir = await mkdtemp(join(tmpdir(), "mw-faults-redis-"));
  let port = await freePort();
  let child: ChildProcess | undefined;

  async function launch(): Promise<boolean> {
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
    ];
    child = spawn("redis-server", args, { stdio: "ignore" });
    return answers(port, child);
  }

  // The port was free a moment ago; if something took it meanwhile, pick another (first start only:
  // a restart must come back where the receivers look for it).
  for (let tries = 0; !(await launch()); tries++) {
    if (tries > 5) throw new Error("could not start redis-server");
    port = await freePort();
  }

  async function stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const running = child;
    if (!isRunning(running)) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    running.kill("SIGCONT"); // a frozen server cannot act on SIGTERM
    running.kill(signal);
    const late = setTimeout(() => running.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(late);
  }

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => stop(),
    async start() {
      if (!(await launch())) throw new Error(`redis-server did not start again on port ${port}`);
    },
    freeze: () => void child?.kill("SIGSTOP"),
    thaw: () => void child?.kill("SIGCONT"),
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
