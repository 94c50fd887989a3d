import { createReceiver, memoryStore } from "merchant-webhooks";
import { pino } from "pino";
import { notificationText } from "./notification-body.js";

/**
 * Heap held per 1,000 notifications in flight: that many distinct renewals handed to the core at once,
 * their handlers all waiting, the heap measured (after a full GC, `--expose-gc`) before they arrive
 * and while they wait, then released. The bytes of the bodies themselves are counted (they are what a
 * server holds), as are the claims in the memory store. Median of a few rounds.
 */
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 1_000);
const ROUNDS = Number(process.env.IN_FLIGHT_ROUNDS ?? 5);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

const encoder = new TextEncoder();
let release: () => void = () => {};
let waiting = 0;
const receiver = createReceiver({
  logger: pino(pino.destination({ dest: "/dev/null", sync: true })),
  idempotency: memoryStore({ maxEntries: 1_000_000 }),
  onRenew: () =>
    new Promise<void>((resolve) => {
      waiting++;
      const previous = release;
      release = () => {
        previous();
        resolve();
      };
    }),
});
const headers = { "content-type": "application/json" };
let next = 0;

const heap = () => {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
};

const samples: number[] = [];
for (let round = 0; round < ROUNDS + 1; round++) {
  const before = heap();
  waiting = 0;
  const answers = Array.from({ length: IN_FLIGHT }, () =>
    receiver.handle({ method: "POST", headers, rawBody: encoder.encode(notificationText(`heap-${next++}`)) }),
  );
  while (waiting < IN_FLIGHT) await new Promise((resolve) => setImmediate(resolve));
  const held = heap() - before;
  release();
  release = () => {};
  await Promise.all(answers);
  if (round > 0) samples.push(held); // the first round warms up
}
samples.sort((a, b) => a - b);
const median = samples[Math.floor(samples.length / 2)]!;
console.log(
  JSON.stringify({
    in_flight: IN_FLIGHT,
    heap_kb_per_1000_in_flight: Math.round(((median / IN_FLIGHT) * 1000) / 1024),
    heap_kb_range: [samples[0]!, samples.at(-1)!].map((bytes) => Math.round(((bytes / IN_FLIGHT) * 1000) / 1024)),
    body_bytes: encoder.encode(notificationText("heap-0")).byteLength,
  }),
);
