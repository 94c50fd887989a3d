import { Agent, createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Queue, Worker } from "bullmq";
import { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import { subscriptionWebhook } from "merchant-webhooks/node";
import { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";

/**
 * The library's queue path against plain BullMQ, in one process, taking turns round after round:
 * acknowledgements per second over HTTP with 32 in flight (the library's Node handler with `bullmqQueue`
 * + `redisStore`, against a bare `node:http` route doing `JSON.parse` then one `queue.add` with the id as
 * job id), then drained per second (`createWorker` with an empty handler, against a plain BullMQ `Worker`
 * with an empty processor, concurrency 20 each). Ratios are taken within each round.
 */
export interface AgainstBullmq {
  rounds: { library_acks: number; plain_acks: number; library_drained: number; plain_drained: number }[];
  acks_ratio: { median: number; range: [number, number] };
  drain_ratio: { median: number; range: [number, number] };
}

const silent = () => pino({ level: "silent" });
const IN_FLIGHT = 32;

export async function againstPlainBullmq(options: {
  url: string;
  prefix: string;
  count: number;
  rounds: number;
  concurrency: number;
  bodies: (n: number) => Uint8Array[];
}): Promise<AgainstBullmq> {
  const { url, count, concurrency } = options;
  const libPrefix = `${options.prefix}-lib`;
  const plainPrefix = `${options.prefix}-plain`;

  const store = redisStore({ connection: url, prefix: `${libPrefix}-store:` });
  const libraryQueue = bullmqQueue({ connection: url, name: "bench", prefix: libPrefix });
  const handler = subscriptionWebhook({ logger: silent(), idempotency: store, queue: libraryQueue });
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port || 6379), maxRetriesPerRequest: null };
  const plainQueue = new Queue("bench", { connection, prefix: plainPrefix });
  const plainRoute = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const notification = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string; event_type: string };
      plainQueue.add(notification.event_type, notification, { jobId: notification.id, removeOnComplete: true }).then(
        () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end('{"accepted":true}');
        },
        () => {
          res.writeHead(503);
          res.end();
        },
      );
    });
  });
  const libraryServer = createServer(handler);
  const portOf = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  };
  const libraryPort = await portOf(libraryServer);
  const plainPort = await portOf(plainRoute);
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

  const post = (port: number, body: Uint8Array) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/",
          headers: { "content-type": "application/json", "content-length": body.byteLength },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  /** Acknowledged per second, `IN_FLIGHT` requests at a time. */
  async function acks(port: number, list: Uint8Array[]): Promise<number> {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < list.length) {
          const status = await post(port, list[next++]!);
          if (status !== 200) throw new Error(`unexpected ${status}`);
        }
      }),
    );
    return Math.round(list.length / ((performance.now() - started) / 1000));
  }

  /** Start a worker whose handler counts, and time until it ran `count` of them. */
  async function drained(
    start: (done: () => void) => { waitUntilReady(): Promise<unknown>; close(): Promise<unknown> },
  ) {
    let ran = 0;
    let finished!: () => void;
    const all = new Promise<void>((resolve) => (finished = resolve));
    const worker = start(() => {
      if (++ran === count) finished();
    });
    await worker.waitUntilReady();
    const started = performance.now();
    await all;
    const seconds = (performance.now() - started) / 1000;
    await worker.close();
    return Math.round(count / seconds);
  }
  const libraryDrain = () =>
    drained((done) =>
      createWorker({
        connection: url,
        name: "bench",
        prefix: libPrefix,
        concurrency,
        idempotency: store,
        logger: silent(),
        onRenew: () => done(),
      }),
    );
  const plainDrain = () =>
    drained((done) => new Worker("bench", async () => done(), { connection, prefix: plainPrefix, concurrency }));

  await acks(libraryPort, options.bodies(300)); // warm-up, both ways, then empty both queues
  await acks(plainPort, options.bodies(300));
  await libraryQueue.queue.drain();
  await plainQueue.drain();
  const rounds: AgainstBullmq["rounds"] = [];
  for (let round = 0; round < options.rounds; round++) {
    const libraryFirst = round % 2 === 0;
    const row = { library_acks: 0, plain_acks: 0, library_drained: 0, plain_drained: 0 };
    for (const way of libraryFirst ? ["library", "plain"] : ["plain", "library"]) {
      if (way === "library") row.library_acks = await acks(libraryPort, options.bodies(count));
      else row.plain_acks = await acks(plainPort, options.bodies(count));
    }
    for (const way of libraryFirst ? ["library", "plain"] : ["plain", "library"]) {
      if (way === "library") row.library_drained = await libraryDrain();
      else row.plain_drained = await plainDrain();
    }
    rounds.push(row);
  }

  await new Promise((resolve) => libraryServer.close(resolve));
  await new Promise((resolve) => plainRoute.close(resolve));
  agent.destroy();
  await handler.receiver.close();
  await plainQueue.close();
  await store.close?.();

  const ratio = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const round2 = (x: number) => Math.round(x * 100) / 100;
    return {
      median: round2(sorted[Math.floor(sorted.length / 2)]!),
      range: [round2(sorted[0]!), round2(sorted.at(-1)!)] as [number, number],
    };
  };
  return {
    rounds,
    acks_ratio: ratio(rounds.map((r) => r.library_acks / r.plain_acks)),
    drain_ratio: ratio(rounds.map((r) => r.library_drained / r.plain_drained)),
  };
}
