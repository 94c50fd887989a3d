import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCRIPT = "examples/express/server.ts";

/** The handler log lines of examples/express, one per handler run. */
const HANDLER_MESSAGES = new Set([
  "subscription created",
  "access extended",
  "access revoked",
  "subscription suspended",
  "subscription resumed",
]);

export interface ExampleProcess {
  pid: number;
  /** Kill with SIGKILL, as a crash would, and wait until the process is gone. */
  kill(): Promise<void>;
  /** Stop with SIGTERM and wait. */
  stop(): Promise<void>;
}

/**
 * Runs examples/express as `npm start` would (tsx, its own process) on `port`, configured by `env`,
 * and records the notification id of every handler log line it writes into `handlerRuns` (as
 * `stale:<id>` for a stale notification skipped under WEBHOOK_ORDERING).
 */
export async function startExample(
  port: number,
  env: Record<string, string>,
  handlerRuns: string[],
): Promise<ExampleProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`examples/express did not start: ${stderr}`)), 60_000);
    let partial = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        let entry: { msg?: string; notification_id?: string };
        try {
          entry = JSON.parse(line) as typeof entry;
        } catch {
          continue; // not a pino line (a runtime warning): nothing to count
        }
        if (entry.msg?.startsWith("receiving notifications on")) {
          clearTimeout(timer);
          resolve();
        }
        if (entry.msg && HANDLER_MESSAGES.has(entry.msg) && entry.notification_id)
          handlerRuns.push(entry.notification_id);
        if (entry.msg === "stale notification skipped" && entry.notification_id)
          handlerRuns.push(`stale:${entry.notification_id}`);
      }
    });
    void exited.then(() => reject(new Error(`examples/express exited: ${stderr}`)));
  });
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return { pid: child.pid!, kill: () => signal("SIGKILL"), stop: () => signal("SIGTERM") };
}
