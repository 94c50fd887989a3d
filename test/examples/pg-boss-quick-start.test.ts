import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_URL } from "../support/postgres.js";
import { eventually, freePort } from "../support/redis.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The ```ts blocks of docs/queues.md's pg-boss section, in order: the receiver, then the worker. */
function quickStart(): { receiver: string; worker: string } {
  const page = readFileSync(join(root, "docs", "queues.md"), "utf8");
  const section = page.slice(page.indexOf("## pg-boss:"), page.indexOf("\n## ", page.indexOf("## pg-boss:") + 1));
  const blocks = Array.from(section.matchAll(/^```ts\n([\s\S]*?)^```$/gm), (match) => match[1]!);
  expect(blocks[0]).toMatch(/^\/\/ receiver\.ts/);
  expect(blocks[1]).toMatch(/^\/\/ worker\.ts/);
  return { receiver: blocks[0]!, worker: blocks[1]! };
}

/**
 * docs/queues.md's pg-boss quick start, run as written, on a database that has nothing in it yet: the
 * two files as they stand on the page, each a process of its own, as a merchant copies them.
 */
describe("the pg-boss quick start in docs/queues.md", () => {
  const database = `mw_quick_start_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const url = new URL(DATABASE_URL);
  url.pathname = `/${database}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  // Inside the repository so tsx maps `merchant-webhooks/...` to the sources (tsconfig.json paths).
  const dir = join(root, "test-output", database);
  const children: ChildProcess[] = [];
  const output: string[] = [];
  let port: number;

  const start = (file: string) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(dir, file)], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: url.toString(), PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (chunk) => output.push(String(chunk)));
    child.stderr!.on("data", (chunk) => output.push(String(chunk)));
    children.push(child);
  };

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    const { receiver, worker } = quickStart();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "receiver.ts"), receiver);
    writeFileSync(join(dir, "worker.ts"), worker);
    port = await freePort();
  });

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.all(
      children.map((child) => new Promise((resolve) => child.exitCode !== null || child.once("exit", resolve))),
    );
    rmSync(dir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  });

  it("answers 200 on a fresh database, and the worker runs the renewal once", async () => {
    const renewal = readFileSync(join(root, "test", "fixtures", "renewal.json"), "utf8");
    const deliver = () =>
      fetch(`http://127.0.0.1:${port}/webhooks/subscriptions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: renewal,
      }).catch(() => undefined);

    start("receiver.ts");
    const first = await eventually(async () => await deliver(), 60_000, "the receiver to answer");
    expect({ status: first!.status, body: await first!.json() }, output.join("")).toEqual({
      status: 200,
      body: { processed: true, message: "accepted for processing" },
    });

    start("worker.ts");
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    try {
      const id = JSON.parse(renewal).id as string;
      await eventually(
        async () =>
          (
            await db
              .query("SELECT count(*)::int AS n FROM renewals WHERE notification_id = $1", [id])
              .catch(() => undefined)
          )?.rows[0]?.n === 1,
        60_000,
        "the worker to record the renewal",
      );
      const again = await deliver();
      expect(await again!.json()).toEqual({ processed: true, message: "already processed" });
      const { rows } = await db.query("SELECT count(*)::int AS n FROM renewals");
      expect(rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
    // Neither process reported a pool or pg-boss error on the way.
    expect(output.join("")).not.toMatch(/pg pool:|pg-boss:/);
  }, 150_000);
});
