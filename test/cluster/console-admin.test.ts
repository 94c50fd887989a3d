import { createReceiver } from "merchant-webhooks";
import type { ListedRecord } from "merchant-webhooks/console";
import { redisStore } from "merchant-webhooks/redis";
import { buildNotification } from "merchant-webhooks/testing";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../support/capture-logger.js";
import { clusterForFile } from "./fixtures/cluster-suite.js";

const cluster = await clusterForFile("test/cluster/console-admin.test.ts");
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe.skipIf(!cluster)("the console's list on a Redis Cluster of 3 masters and 3 replicas", () => {
  afterAll(async () => {
    await cluster?.stop();
  }, 30_000);

  it("writes each record's time index in its own slot, and lists every record across the slots", async () => {
    const store = redisStore({ connection: await cluster!.client(), prefix: "console:idem:", timeoutMs: 2_000 });
    const ordered = createReceiver({ logger: silentLogger(), idempotency: store, ordering: true, onRenew: () => {} });
    const unordered = createReceiver({ logger: silentLogger(), idempotency: store, onRenew: () => {} });
    const sent: string[] = [];
    for (let i = 0; i < 60; i++) {
      const body = buildNotification("SUBSCRIPTION_RENEW", undefined, { random: true });
      sent.push(body.id);
      const receiver = i % 2 === 0 ? ordered : unordered;
      const answer = await receiver.handle({
        method: "POST",
        headers: { "content-type": "application/json" },
        rawBody: json(body),
      });
      // A claim or completion whose script named an index of another slot would fail with CROSSSLOT.
      expect(answer.status).toBe(200);
    }
    const listed: ListedRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.list!({ limit: 7, ...(cursor ? { cursor } : {}) });
      listed.push(...page.items);
      cursor = page.cursor;
    } while (cursor);
    expect(listed.map((item) => item.id).sort()).toEqual([...sent].sort());
    expect(listed.every((item) => item.state === "completed")).toBe(true);
    expect(listed.filter((item) => item.order !== undefined)).toHaveLength(30);
    // One record by id alone, claimed in order (its key names its subscription, unknown to the caller).
    const [found] = (await store.list!({ id: sent[0]! })).items;
    expect(found).toMatchObject({ id: sent[0], state: "completed", order: { key: expect.any(String) } });
    await ordered.close();
    await unordered.close();
    await store.close();
  }, 60_000);
});
