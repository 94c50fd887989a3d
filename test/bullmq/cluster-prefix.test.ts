import { Cluster, Redis } from "ioredis";
import { bullmqQueue, createWorker, redrive } from "merchant-webhooks/bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { assertClusterPrefix, hashTagOf } from "../../src/bullmq/cluster-prefix.js";

// Never connected: the check runs before any connection is used.
const cluster = new Cluster([{ host: "127.0.0.1", port: 1 }], { lazyConnect: true });
const single = new Redis({ lazyConnect: true });
afterAll(() => {
  cluster.disconnect();
  single.disconnect();
});

describe("the hash-tag rule for BullMQ on Redis Cluster", () => {
  it("reads a key's hash tag as Redis Cluster does", () => {
    expect(hashTagOf("{mw}:queue:wait")).toBe("mw");
    expect(hashTagOf("bull:{orders}:wait")).toBe("orders");
    expect(hashTagOf("bull:queue:wait")).toBeUndefined();
    expect(hashTagOf("{}:queue")).toBeUndefined(); // an empty tag: Redis hashes the whole key
    expect(hashTagOf("mw{:queue")).toBeUndefined();
  });

  it("bullmqQueue, createWorker and redrive refuse a Cluster without a hash-tagged prefix, naming the fix", async () => {
    expect(() => bullmqQueue({ connection: cluster, name: "notifications" })).toThrow(
      'bullmqQueue: on Redis Cluster every key of a queue must be in one hash slot, and no prefix (BullMQ\'s default is "bull") has no hash tag. Give a prefix with one, such as prefix: "{mw}", and the same prefix to bullmqQueue, createWorker and redrive.',
    );
    expect(() => bullmqQueue({ connection: cluster, name: "notifications", prefix: "mw" })).toThrow(
      /prefix "mw" has no hash tag.*prefix: "\{mw\}"/,
    );
    expect(() => createWorker({ connection: cluster, name: "notifications", prefix: "{}", onRenew: () => {} })).toThrow(
      /^createWorker: .*prefix: "\{mw\}"/,
    );
    await expect(redrive({ connection: cluster, name: "notifications", prefix: "mw" })).rejects.toThrow(
      /^redrive: .*prefix: "\{mw\}"/,
    );
  });

  it("accepts a tag in the prefix or the queue name, and any prefix on a single Redis", () => {
    expect(() => assertClusterPrefix("bullmqQueue", cluster, "notifications", "{mw}")).not.toThrow();
    expect(() => assertClusterPrefix("bullmqQueue", cluster, "{notifications}", undefined)).not.toThrow();
    expect(() => assertClusterPrefix("bullmqQueue", single, "notifications", "mw")).not.toThrow();
    expect(() =>
      assertClusterPrefix("bullmqQueue", "redis://127.0.0.1:6379", "notifications", undefined),
    ).not.toThrow();
  });
});
