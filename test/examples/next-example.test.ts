import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { notification } from "../support/notifications.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const example = `${root}/examples/next`;

describe("examples/next", () => {
  it("type-checks against the installed next, including Next's own check of the route's exports", async () => {
    // `next typegen` writes the validator `next build` runs: it checks route.ts against Next's
    // RouteHandlerConfig, so an export Next would refuse fails here too.
    await run(`${root}/node_modules/.bin/next`, ["typegen"], {
      cwd: example,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    const result = await run(`${root}/node_modules/.bin/tsc`, ["-p", example, "--noEmit"], { cwd: root }).catch(
      (err) => err,
    );
    expect(result.stdout).toBe("");
  }, 180_000);

  it("answers real Requests through the route module's exports", async () => {
    const route = await import("../../examples/next/app/webhooks/subscriptions/route.js");
    const post = (body: string, contentType = "application/json") =>
      route.POST(
        new Request("http://localhost/webhooks/subscriptions", {
          method: "POST",
          headers: { "content-type": contentType },
          body,
        }),
      );

    const body = JSON.stringify(notification("SUBSCRIPTION_CANCELLED"));
    const first = await post(body);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ processed: true, message: "processed" });
    expect(await (await post(body)).json()).toEqual({ processed: true, message: "already processed" });

    const broken = await post("{");
    expect(broken.status).toBe(400);
    expect(await broken.json()).toEqual({ processed: false, message: "body is not valid JSON" });

    const get = await route.GET(new Request("http://localhost/webhooks/subscriptions"));
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });
});
