import { createReceiver, memoryStore } from "merchant-webhooks";
import { buildNotification } from "merchant-webhooks/testing";
import { pino } from "pino";
import { type Step, timeSteps } from "./cpu-rounds.js";
import { guardedHandWrittenRoute, handWrittenRoute } from "./servers/hand-written.js";

/**
 * What each added kilobyte of payload costs, in-process (CPU time, batches taking turns): the bench
 * renewal, and the same renewal carrying merchant metadata (`payment_detail.metadata`, a free map of
 * small objects, arrays, strings and numbers, the dense kind that costs the most per byte) of
 * `PER_KB_SIZES` KB, through the library's core (memory store, log line to /dev/null), the plain
 * hand-written route and the "same guarantees" one (UTF-8 decoding and `JSON.parse` before each).
 * The cost per added KB is the slope between the smallest and the largest body. With
 * `BENCH_BASELINE=<dist>` (`bench/build-baseline.ts`) the library's core of that build takes its turn
 * too, as "library baseline".
 */
const sizes = (process.env.PER_KB_SIZES ?? "0,16,64").split(",").map(Number);
const rounds = Number(process.env.PER_KB_ROUNDS ?? 7);

const renewal = buildNotification("SUBSCRIPTION_RENEW") as Record<string, any>;

/** The renewal's compact JSON with about `kb` KB of metadata, split around its id. */
function template(kb: number): { head: string; tail: string; bytes: number } {
  const value = structuredClone(renewal);
  const metadata: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(metadata).length < kb * 1024; i++) {
    metadata[`item_${i}`] = {
      note: `line ${i} of the order`,
      quantity: i,
      tags: ["gift", "priority", { weight: i % 7 }],
      price: { value: `${i}.99`, currency: "EUR" },
    };
  }
  if (kb > 0) value.resource.renewal_event.payment_detail.metadata = metadata;
  const text = JSON.stringify(value);
  const at = text.indexOf('"id":"');
  return {
    head: text.slice(0, at),
    tail: text.slice(text.indexOf('"', at + 6) + 1),
    bytes: Buffer.byteLength(text),
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
let next = 0;
const receiverOf = (entry: Pick<typeof import("merchant-webhooks"), "createReceiver" | "memoryStore">) =>
  entry.createReceiver({
    logger: pino(pino.destination({ dest: "/dev/null", sync: false })),
    idempotency: entry.memoryStore({ maxEntries: 2_000_000 }),
    onRenew: () => {},
    // Room for bodies up to 1 MB (PER_KB_SIZES up to about 900).
    bodyLimit: 4 * 1024 * 1024,
  });
const libraries = { library: receiverOf({ createReceiver, memoryStore }) };
if (process.env.BENCH_BASELINE) {
  const baseline = (await import(`${process.env.BENCH_BASELINE}/index.js`)) as typeof import("merchant-webhooks");
  Object.assign(libraries, { "library baseline": receiverOf(baseline) });
}
const headers = { "content-type": "application/json" };
const routes = { "hand-written": await handWrittenRoute(), "same guarantees": await guardedHandWrittenRoute() };

function steps(kb: number): Step[] {
  const { head, tail } = template(kb);
  const bodies = (count: number) =>
    Array.from({ length: count }, () => encoder.encode(`${head}"id":"kb-${next++}"${tail}`));
  const check = (status: number) => {
    if (status !== 200) throw new Error(`unexpected ${status}`);
  };
  return [
    ...Object.entries(libraries).map(
      ([name, receiver]): Step => ({
        name: `${name} ${kb}`,
        async: true,
        prepare(count) {
          const all = bodies(count);
          return async (i) => check((await receiver.handle({ method: "POST", headers, rawBody: all[i]! })).status);
        },
      }),
    ),
    ...Object.entries(routes).map(
      ([name, route]): Step => ({
        name: `${name} ${kb}`,
        async: true,
        prepare(count) {
          const all = bodies(count);
          return async (i) => check((await route(JSON.parse(decoder.decode(all[i]!)))).status);
        },
      }),
    ),
  ];
}

const results = [];
for (const kb of sizes) {
  const size = Math.max(200, Math.round(6_000 / (kb + 2)));
  const timed = await timeSteps(steps(kb), { rounds, size, warmup: size });
  results.push({
    kb,
    bytes: template(kb).bytes,
    us: Object.fromEntries(timed.map((t) => [t.name.replace(/ \d+$/, ""), t.us])),
  });
}
const [small, large] = [results[0]!, results.at(-1)!];
const addedKb = (large.bytes - small.bytes) / 1024;
const slope = (name: string) => Math.round(((large.us[name]! - small.us[name]!) / addedKb) * 100) / 100;
const perKb = {
  library: slope("library"),
  hand_written: slope("hand-written"),
  same_guarantees: slope("same guarantees"),
  ...(process.env.BENCH_BASELINE ? { library_baseline: slope("library baseline") } : {}),
};
console.log(
  JSON.stringify({
    sizes: results,
    us_per_added_kb: perKb,
    library_to_hand_written: Math.round((perKb.library / perKb.hand_written) * 100) / 100,
    library_to_same_guarantees: Math.round((perKb.library / perKb.same_guarantees) * 100) / 100,
    ...(perKb.library_baseline === undefined
      ? {}
      : { baseline_to_hand_written: Math.round((perKb.library_baseline / perKb.hand_written) * 100) / 100 }),
  }),
);
