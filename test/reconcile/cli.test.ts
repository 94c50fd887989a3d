import { fileURLToPath } from "node:url";
import { createPaymentClient } from "merchant-webhooks/client";
import { redisOrderLedger } from "merchant-webhooks/reconcile";
import { createPlatformSimulator } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { runCli, runCliProcess } from "../cli/run-cli.js";
import { REDIS_URL } from "../support/redis.js";
import { redisTestBed, simpleOrder } from "./support.js";

const handlers = fileURLToPath(new URL("./fixtures/order-handlers.ts", import.meta.url));

describe("merchant-webhooks reconcile", () => {
  const { redis, prefix, cleanup } = redisTestBed("reconcile-cli");

  it("audits, then repairs with the --handlers module: a summary table, one effect per missing event", async () => {
    const sim = createPlatformSimulator({ seed: 11 });
    cleanup.push(() => sim.close());
    const api = await sim.listen(0);
    const client = createPaymentClient({ baseUrl: api, ledger: redisOrderLedger(redis, { prefix }) });
    const paid: string[] = [];
    for (let index = 0; index < 4; index++) {
      const order = await client.createOrder(simpleOrder(`cli-${prefix}-${index}`));
      if (index < 3) paid.push(sim.orders.pay(order.id).id);
    }
    const common = ["--api", api, "--redis", REDIS_URL, "--prefix", prefix, "--store-prefix", `${prefix}idem:`];
    const env = { RECONCILE_TEST_PREFIX: prefix };
    Object.assign(process.env, env);

    const audit = await runCliProcess(["reconcile", ...common, "--since", "1h", "--settle", "0s"]);
    expect(audit.stderr).toBe("");
    expect(audit.code).toBe(1);
    expect(audit.stdout).toMatch(/^audit run /);
    expect(audit.stdout).toMatch(/^orders checked +4$/m);
    expect(audit.stdout).toMatch(/^order gaps +3$/m);
    expect(audit.stdout).toMatch(/^ {2}repaired +0$/m);
    for (const id of paid) expect(audit.stdout).toContain(`order ${id} (`);

    const repair = await runCliProcess([
      "reconcile",
      ...common,
      "--since",
      "1h",
      "--settle",
      "0s",
      "--repair",
      "--handlers",
      handlers,
    ]);
    expect(repair.stderr).toBe("");
    expect(repair.code).toBe(0);
    expect(repair.stdout).toMatch(/^ {2}repaired +3$/m);
    for (const id of paid) expect(await redis.get(`${prefix}cli-effect:${id}:true`), id).toBe("1");

    // Nothing left: the next audit finds no gap and exits 0.
    const again = await runCli(["reconcile", ...common, "--since", "1h", "--settle", "0s"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^orders checked +1$/m);
  });

  it("refuses --repair without a handlers module, and a duration without a unit", async () => {
    const noHandlers = await runCli(["reconcile", "--api", "http://127.0.0.1:1", "--repair"]);
    expect(noHandlers.code).toBe(2);
    expect(noHandlers.stderr).toContain("--repair needs --handlers");
    const badSince = await runCli(["reconcile", "--api", "http://127.0.0.1:1", "--since", "24"]);
    expect(badSince.code).toBe(2);
    expect(badSince.stderr).toContain("--since must be a number and a unit");
  });
});
