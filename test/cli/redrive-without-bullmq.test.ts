import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCliProcess } from "./run-cli.js";

// bullmq is an optional peer: a merchant using only the receiver has not installed it. The CLI's
// other commands must not need it, and redrive must say which package to install, not print the
// module loader's stack.
const WITHOUT_BULLMQ = ["--import", fileURLToPath(new URL("./fixtures/without-bullmq.mjs", import.meta.url))];

describe("merchant-webhooks redrive without bullmq installed", () => {
  it("prints its help, and names the package to install when run", async () => {
    const [help, run] = await Promise.all([
      runCliProcess(["redrive", "--help"], WITHOUT_BULLMQ),
      runCliProcess(["redrive", "--queue", "subscription-notifications"], WITHOUT_BULLMQ),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: merchant-webhooks redrive --queue <name>");
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("redrive needs the bullmq package, which is not installed: npm install bullmq\n");
  });

  it("leaves the other commands working", async () => {
    const run = await runCliProcess(["send", "renew", "--print"], WITHOUT_BULLMQ);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).event_type).toBe("SUBSCRIPTION_RENEW");
  });
});
