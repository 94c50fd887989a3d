import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ReceiverProcess } from "../redis/fixtures/spawn-receiver.js";

const script = fileURLToPath(new URL("./fault-receiver-process.ts", import.meta.url));
const root = fileURLToPath(new URL("../../", import.meta.url));

export interface FaultReceiverEnv {
  STORE_URL: string;
  STORE_PREFIX: string;
  JOURNAL_URL: string;
  JOURNAL: string;
  LEASE_MS: string;
}

/** Start `fault-receiver-process.ts` in a child Node process and wait until it listens. */
export async function spawnFaultReceiver(env: FaultReceiverEnv): Promise<ReceiverProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    // Generous: two cores shared with other work, and tsx compiles the sources on start.
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`fault receiver did not start within 30 s: ${stderr}`));
    }, 30_000);
    let stdout = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /listening (\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`fault receiver exited before it listened: ${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    pid: child.pid!,
    child,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
