import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath, pathToFileURL } from "node:url";
import express from "express";
import { type SubscriptionWebhookOptions, subscriptionWebhook } from "merchant-webhooks/express";
import { runCommandLine } from "../../src/cli/command-line.js";
import { silentLogger } from "../support/capture-logger.js";
import { captureIo } from "./capture-io.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The CLI as a user runs it, from the command line's words to the exit status and what it wrote, run
 * in this process: starting a Node process with a TypeScript loader per case took most of test:unit's
 * time. `runCliProcess` is the binary itself, for what only a process shows (its exit, signals).
 */
export async function runCli(args: readonly string[]): Promise<CliRun> {
  const io = captureIo();
  const code = await runCommandLine(args, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** The binary's entry as a separate Node process on the TypeScript sources; `nodeFlags` go before it. */
export function runCliProcess(args: readonly string[], nodeFlags: readonly string[] = []): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeFlags, "--import", "tsx", "src/cli/main.ts", ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Node flags for `runCliProcess` that make the optional peers `packages` impossible to find, as if never installed. */
export const without = (...packages: string[]) => {
  const url = pathToFileURL(new URL("./fixtures/without-peers.mjs", import.meta.url).pathname);
  url.searchParams.set("hide", packages.join(","));
  return ["--import", url.href];
};

export interface RunningWebhook {
  url: string;
  close(): Promise<void>;
}

/** A real Express app with the webhook at /hook, on an ephemeral loopback port. */
export async function startWebhook(options: SubscriptionWebhookOptions): Promise<RunningWebhook> {
  const app = express();
  app.post("/hook", subscriptionWebhook({ logger: silentLogger(), ...options }));
  return serveOnLoopback(createServer(app));
}

/** `server` listening on an ephemeral loopback port, with its URL at /hook. */
export async function serveOnLoopback(server: Server): Promise<RunningWebhook> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
