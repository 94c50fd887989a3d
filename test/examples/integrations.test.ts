import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { binaryOf } from "../runtimes/runtimes.js";
import { notification } from "../support/notifications.js";
import { eventually, freePort } from "../support/redis.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** Start an example on a free port and wait until it answers; its webhook URL's origin. */
async function start(command: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const port = await freePort();
  const child = spawn(
    command,
    args.map((arg) => arg.replace("$PORT", String(port))),
    {
      cwd: root,
      env: { ...process.env, PORT: String(port), DENO_NO_UPDATE_CHECK: "1", ...env },
      stdio: "ignore",
    },
  );
  children.push(child);
  const origin = `http://127.0.0.1:${port}`;
  await eventually(
    async () => (await fetch(`${origin}/`).catch(() => undefined)) !== undefined,
    30_000,
    `${args.join(" ")} to answer`,
  );
  return origin;
}

/** A renewal, then the same again: processed once, then already processed. */
async function renewTwice(origin: string) {
  const body = JSON.stringify(notification("SUBSCRIPTION_RENEW"));
  const send = () =>
    fetch(`${origin}/webhooks/subscriptions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
  const first = await send();
  expect(await first.json()).toEqual({ processed: true, message: "processed" });
  expect(await (await send()).json()).toEqual({ processed: true, message: "already processed" });
  return first;
}

describe("the integration examples", () => {
  it.each(["express", "fastify"])(
    "examples/nest/main.ts on platform-%s: the decorated handler, with its injected service",
    async (platform) => {
      const origin = await start(process.execPath, ["--import", "tsx", "examples/nest/main.ts"], {
        NEST_PLATFORM: platform,
      });
      const body = notification("SUBSCRIPTION_RENEW");
      const response = await fetch(`${origin}/webhooks/subscriptions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(await response.json()).toEqual({ processed: true, message: "processed" });
      const access = await fetch(`${origin}/access/${body.resource.id}`);
      expect(await access.json()).toEqual({ state: "active" });
    },
    60_000,
  );

  it("examples/hono/app.ts on Bun: c.var.notification read around the webhook", async () => {
    const origin = await start(binaryOf("bun")!, ["run", "examples/hono/app.ts"]);
    const first = await renewTwice(origin);
    expect(first.headers.get("x-notification-id")).toMatch(/^evt-/);
  }, 60_000);

  it("examples/bun/server.ts on Bun", async () => {
    await renewTwice(await start(binaryOf("bun")!, ["run", "examples/bun/server.ts"]));
  }, 60_000);

  it("examples/deno/server.ts with deno serve, the package as built", async () => {
    const deno = binaryOf("deno")!;
    const args = [
      "serve",
      "--port",
      "$PORT",
      "--allow-net",
      "--allow-read",
      "--allow-env",
      "--allow-sys=hostname",
      "--no-prompt",
      "examples/deno/server.ts",
    ];
    await renewTwice(await start(deno, args));
  }, 60_000);
});
