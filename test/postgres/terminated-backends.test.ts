import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnWorker, type WorkerProcess } from "../bullmq/fixtures/spawn-worker.js";
import { pgBossBed } from "../pg-boss/fixtures/bed.js";
import { notification } from "../support/notifications.js";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually, sleep } from "../support/redis.js";
import { type TerminatingProxy, terminatingProxy } from "./fixtures/terminating-proxy.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const receiverScript = fileURLToPath(new URL("../pg-boss/fixtures/receiver-process.ts", import.meta.url));
const workerScript = fileURLToPath(new URL("../pg-boss/fixtures/worker-process.ts", import.meta.url));
const COUNT = 120;

/** A receiver process (postgresStore + pgBossQueue) fed one notification per stdin line. */
interface ReceiverChild {
  child: ChildProcess;
  /** The last status answered per id. */
  answers: Map<string, number>;
}

describe("backends terminated under receivers and workers on postgresStore + pg-boss", () => {
  const bed = pgBossBed(
    "pgterm",
    (schema) => `CREATE TABLE "${schema}".effects (notification_id text NOT NULL, pid int NOT NULL);
       CREATE TABLE "${schema}".started (notification_id text NOT NULL, pid int NOT NULL)`,
  );
  const { schema, bossSchema, pool } = bed;
  const target = new URL(DATABASE_URL);
  let proxy: TerminatingProxy;
  const receivers: ReceiverChild[] = [];
  const workers: WorkerProcess[] = [];
  const deaths: string[] = [];

  const spawnReceiver = async (env: Record<string, string>): Promise<ReceiverChild> => {
    const child = spawn(process.execPath, ["--import", "tsx", receiverScript], {
      cwd: root,
      env: { ...process.env, ...env, HOLD_ID: "none" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const answers = new Map<string, number>();
    let out = "";
    let err = "";
    child.stderr!.on("data", (chunk) => (err += chunk));
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const lines = out.split("\n");
      out = lines.pop()!;
      for (const line of lines) {
        const match = /^answered (\S+) (\d+)$/.exec(line);
        if (match) answers.set(match[1]!, Number(match[2]));
        if (line === "ready") answers.set("ready", 0);
      }
    });
    child.once("exit", (code, signal) => deaths.push(`receiver ${child.pid} ${code ?? signal}: ${err.slice(-600)}`));
    await eventually(async () => answers.has("ready"), 30_000, "the receiver process to start");
    return { child, answers };
  };

  beforeAll(async () => {
    proxy = await terminatingProxy(pool, { host: target.hostname, port: Number(target.port || 5432) });
    const env = {
      DATABASE_URL: proxy.url(target.pathname.slice(1)),
      SCHEMA: schema,
      BOSS_SCHEMA: bossSchema,
      QUEUE: "term",
      CONCURRENCY: "5",
    };
    const started = await Promise.all([
      spawnReceiver(env),
      spawnReceiver(env),
      spawnWorker(env, { script: workerScript }),
      spawnWorker(env, { script: workerScript }),
    ]);
    receivers.push(started[0] as ReceiverChild, started[1] as ReceiverChild);
    for (const worker of started.slice(2) as WorkerProcess[]) {
      workers.push(worker);
      void worker.exited.then((code) => deaths.push(`worker ${worker.child.pid} ${code ?? worker.child.signalCode}`));
    }
  }, 90_000);
  afterAll(async () => {
    for (const { child } of receivers) child.kill("SIGKILL");
    for (const worker of workers) worker.kill("SIGKILL");
    await Promise.all([
      ...receivers.map(
        ({ child }) => new Promise((resolve) => (child.exitCode !== null ? resolve(0) : child.once("exit", resolve))),
      ),
      ...workers.map((worker) => worker.exited),
    ]);
    await proxy?.close();
  });

  it(`kills no process, and completes every notification answered 200, once (${COUNT} notifications)`, async () => {
    // From now on every third new connection is terminated as it becomes ready, and every connection
    // through the proxy every 300 ms.
    proxy.doomEvery(3);
    let looping = true;
    let rounds = 0;
    const loop = (async () => {
      while (looping) {
        await proxy.terminateAll().catch(() => 0);
        rounds += 1;
        await sleep(300);
      }
    })();

    const sent = Array.from({ length: COUNT }, () => notification());
    // Each receiver gets its half; a notification not answered 200 is sent again, as the platform would.
    const deliverAll = async ({ child, answers }: ReceiverChild, batch: typeof sent) => {
      let pending = batch;
      while (pending.length > 0 && child.exitCode === null && child.signalCode === null) {
        for (const body of pending) {
          answers.delete(body.id);
          child.stdin!.write(`${JSON.stringify(body)}\n`);
        }
        await eventually(
          async () =>
            pending.every((body) => answers.has(body.id)) || child.exitCode !== null || child.signalCode !== null,
          60_000,
          "the receiver to answer",
        );
        pending = pending.filter((body) => answers.get(body.id) !== 200);
        if (pending.length > 0) await sleep(100);
      }
    };
    await Promise.all([
      deliverAll(receivers[0]!, sent.slice(0, COUNT / 2)),
      deliverAll(receivers[1]!, sent.slice(COUNT / 2)),
    ]);
    // The workers run their jobs under the same loop for a while, then without it.
    await sleep(3_000);
    looping = false;
    await loop;
    proxy.doomEvery(0);

    const answered200 = sent.filter((body) => receivers.some(({ answers }) => answers.get(body.id) === 200));
    const effects = async () =>
      (
        await pool.query<{ id: string; n: number }>(
          `SELECT notification_id AS id, count(*)::int AS n FROM "${schema}".effects GROUP BY notification_id`,
        )
      ).rows;
    await eventually(
      async () => (await effects()).length >= answered200.length || deaths.length > 0,
      120_000,
      "every notification answered 200 to be run",
    );
    console.log(
      `terminate loop: ${rounds} rounds, ${proxy.doomed} connections terminated as they became ready, ${answered200.length} of ${COUNT} answered 200`,
    );
    expect(deaths).toEqual([]);
    expect(answered200).toHaveLength(COUNT);
    const perId = new Map((await effects()).map((row) => [row.id, row.n]));
    expect(answered200.filter((body) => perId.get(body.id) !== 1).map((body) => [body.id, perId.get(body.id)])).toEqual(
      [],
    );
    expect(proxy.doomed).toBeGreaterThan(0);
  }, 300_000);
});
