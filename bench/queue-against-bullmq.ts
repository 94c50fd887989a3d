import { Agent, createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Queue, Worker } from "bullmq";
import type { bullmqQueue, createWorker } from "merchant-webhooks/bullmq";
import type { subscriptionWebhook } from "merchant-webhooks/node";
import type { redisStore } from "merchant-webhooks/redis";
import { pino } from "pino";

/**
 * The library's queue path against plain BullMQ, in one process, taking turns round after round:
 * acknowledgements per second over HTTP with 32 in flight (the library's Node handler with `bullmqQueue`
 * + `redisStore`, against a bare `node:http` route doing `JSON.parse` then one `queue.add` with the id as
 * job id and the library's `DEFAULT_JOB_OPTIONS`), then drained per second (`createWorker` with an empty handler, against a plain BullMQ `Worker`
 * with an empty processor, concurrency 20 each). The library is this repository's build (`dist`, as
 * users run it; `npm run build` first). Ratios are taken within each round. With
 * `BENCH_BASELINE=<dist dir>` (`bench/build-baseline.ts`) that build's library takes its turn in the
 * same rounds, and its ratios to plain BullMQ are given beside this one's.
 */
interface Round {
  library_acks: number;
  plain_acks: number;
  library_drained: number;
  plain_drained: number;
  baseline_acks?: number;
  baseline_drained?: number;
}
type Ratio = { median: number; range: [number, number] };
export interface AgainstBullmq {
  rounds: Round[];
  acks_ratio: Ratio;
  drain_ratio: Ratio;
  baseline_acks_ratio?: Ratio;
  baseline_drain_ratio?: Ratio;
}

/** The parts of a build of the library this bench runs. */
interface Library {
  bullmqQueue: typeof bullmqQueue;
  DEFAULT_JOB_OPTIONS: typeof import("merchant-webhooks/bullmq").DEFAULT_JOB_OPTIONS;
  createWorker: typeof createWorker;
  subscriptionWebhook: typeof subscriptionWebhook;
  redisStore: typeof redisStore;
}

/** The library as built (`dist`, as users run it, like the HTTP servers: see `servers/library.ts`), or another build. */
async function builtLibrary(dist = new URL("../dist", import.meta.url).pathname): Promise<Library> {
  const [bullmq, node, redis] = await Promise.all([
    import(`${dist}/bullmq.js`),
    import(`${dist}/node.js`),
    import(`${dist}/redis.js`),
  ]);
  return { ...bullmq, ...node, ...redis } as Library;
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

  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port || 6379), maxRetriesPerRequest: null };
  // The library's job options (retention, attempts, backoff), so the two sides differ only in what the
  // library guarantees; BullMQ's events stream keeps its default length on both.
  const library = await builtLibrary();
  const plainQueue = new Queue("bench", {
    connection,
    prefix: plainPrefix,
    defaultJobOptions: library.DEFAULT_JOB_OPTIONS,
  });
  const plainRoute = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const notification = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string; event_type: string };
      plainQueue.add(notification.event_type, notification, { jobId: notification.id }).then(
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
  const portOf = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  };
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
  /** One build of the library: its store, queue and receiver on their own prefix, and its drain. */
  async function libraryRun(library: Library, prefix: string) {
    const store = library.redisStore({ connection: url, prefix: `${prefix}-store:` });
    const queue = library.bullmqQueue({ connection: url, name: "bench", prefix });
    const handler = library.subscriptionWebhook({ logger: silent(), idempotency: store, queue });
    const server = createServer(handler);
    const port = await portOf(server);
    const drain = () =>
      drained((done) =>
        library.createWorker({
          connection: url,
          name: "bench",
          prefix,
          concurrency,
          idempotency: store,
          logger: silent(),
          onRenew: () => done(),
        }),
      );
    const close = async () => {
      await new Promise((resolve) => server.close(resolve));
      await handler.receiver.close();
      await store.close?.();
    };
    return { port, queue, drain, close };
  }
  const plainDrain = () =>
    drained((done) => new Worker("bench", async () => done(), { connection, prefix: plainPrefix, concurrency }));

  const libraryRounds = await libraryRun(library, libPrefix);
  const dist = process.env.BENCH_BASELINE;
  const baseline = dist ? await libraryRun(await builtLibrary(dist), `${options.prefix}-base`) : undefined;
  const runs: Partial<Record<"library" | "baseline", typeof libraryRounds>> = {
    library: libraryRounds,
    ...(baseline ? { baseline } : {}),
  };
  // Every way takes its turn in each round, the first one further along each round.
  const ways = ["library", "plain", ...(baseline ? (["baseline"] as const) : [])] as const;

  for (const run of Object.values(runs)) await acks(run.port, options.bodies(300)); // warm-up, every way
  await acks(plainPort, options.bodies(300));
  for (const run of Object.values(runs)) await run.queue.queue.drain(); // then empty the queues
  await plainQueue.drain();
  const rounds: Round[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = ways.map((_, i) => ways[(i + round) % ways.length]!);
    const row: Round = { library_acks: 0, plain_acks: 0, library_drained: 0, plain_drained: 0 };
    for (const way of order)
      row[`${way}_acks`] = await acks(way === "plain" ? plainPort : runs[way]!.port, options.bodies(count));
    for (const way of order) row[`${way}_drained`] = way === "plain" ? await plainDrain() : await runs[way]!.drain();
    rounds.push(row);
  }

  await new Promise((resolve) => plainRoute.close(resolve));
  for (const run of Object.values(runs)) await run.close();
  agent.destroy();
  await plainQueue.close();

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
    ...(baseline
      ? {
          baseline_acks_ratio: ratio(rounds.map((r) => r.baseline_acks! / r.plain_acks)),
          baseline_drain_ratio: ratio(rounds.map((r) => r.baseline_drained! / r.plain_drained)),
        }
      : {}),
  };
}
