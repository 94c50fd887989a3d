import { Queue, Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli.js";
import { eventually } from "../support/redis.js";
import { clusterForFile } from "./fixtures/cluster-suite.js";

const cluster = await clusterForFile("test/cluster/redrive-cli.test.ts");

describe.skipIf(!cluster)("merchant-webhooks redrive on a Redis Cluster of 3 masters and 3 replicas", () => {
  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);

  it("moves a failed job back to waiting through several node URLs, and lists the queues for a misspelt one", async () => {
    const prefix = "{mw-redrive}";
    const name = "subscription-notifications";
    const queue = new Queue(name, { connection: await cluster!.client(), prefix });
    const job = await queue.add("notification", { id: "WH-cluster-1" }, { attempts: 1 });
    const worker = new Worker(
      name,
      async () => {
        throw new Error("downstream rejected it");
      },
      {
        connection: await cluster!.client({ enableOfflineQueue: true, redisOptions: { maxRetriesPerRequest: null } }),
        prefix,
      },
    );
    await eventually(async () => (await queue.getJobState(job.id!)) === "failed", 20_000, "the job to fail");
    await worker.close();

    const urls = cluster!.startupNodes.map((node) => `redis://${node.host}:${node.port}`);
    const [misspelt, redriven] = await Promise.all([
      runCli(["redrive", "--queue", "subscription-notification", "--prefix", prefix, "--redis", urls.join(",")]),
      runCli(["redrive", "--queue", name, "--prefix", prefix, ...urls.flatMap((url) => ["--redis", url])]),
    ]);
    expect(misspelt.code).toBe(1);
    expect(misspelt.stderr).toContain(
      `no queue subscription-notification with prefix ${prefix} on Redis Cluster at ${urls.join(", ")}. Queues found:\n`,
    );
    expect(misspelt.stderr).toContain(`\n  ${name}  --prefix ${prefix}\n`);

    expect(redriven.stderr).toBe("");
    expect(redriven.code).toBe(0);
    expect(redriven.stdout).toBe(`redriven: WH-cluster-1\n1 redriven from queue ${name}\n`);
    expect(await queue.getJobState(job.id!)).toBe("waiting");
    await queue.obliterate({ force: true });
    await queue.close();
  });
});
