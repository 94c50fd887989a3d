import { readFileSync } from "node:fs";
import { buildNotification } from "merchant-webhooks/testing";
import { pino } from "pino";
import { median, round2, type Step, timeBatch } from "./cpu-rounds.js";
import { guardedHandWrittenRoute, handWrittenRoute } from "./servers/hand-written.js";
import { library } from "./servers/library.js";

/**
 * What each added kilobyte of payload costs, in-process (CPU time): the bench renewal, and the same
 * renewal carrying `PER_KB_SIZES` KB of merchant metadata (`payment_detail.metadata`, a free map of
 * small objects, arrays, strings and numbers, the dense kind that costs the most per byte; with
 * `PER_KB_BODY=lines`, the platform's renewal in the spec's key order carrying order lines there),
 * through the library's core as built (`dist`, as a user runs it: a bundle can cost what the sources
 * through tsx do not, see docs/performance.md; memory store, log line to /dev/null), the plain
 * hand-written route and the "same guarantees" one (UTF-8 decoding and `JSON.parse` before each).
 * With `BENCH_BASELINE=<dist>` (`bench/build-baseline.ts`) the library's core of that build takes its
 * turn too, as "library baseline". `npm run build` first.
 *
 * A slope is a difference of two timings, so a change of the machine's load between them lands in it
 * whole: every round times each route's smallest and largest body back to back (all sizes and routes
 * take turns within the round, their order turned round to round), each round gives each route's slope
 * and the library's ratio to the hand-written route's, and the figures are the medians of those
 * per-round values, with their range. The first round only warms up.
 */
const sizes = (process.env.PER_KB_SIZES ?? "0,64").split(",").map(Number);
const rounds = Number(process.env.PER_KB_ROUNDS ?? 15);

const renewal = buildNotification("SUBSCRIPTION_RENEW") as Record<string, any>;
/** The platform's renewal as its documentation writes it, keys in the spec's order (not sorted). */
const platformRenewal = JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8"));

/** About `kb` KB of small objects, arrays, strings and numbers: the dense kind that costs the most per byte. */
function denseMetadata(kb: number): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(metadata).length < kb * 1024; i++) {
    metadata[`item_${i}`] = {
      note: `line ${i} of the order`,
      quantity: i,
      tags: ["gift", "priority", { weight: i % 7 }],
      price: { value: `${i}.99`, currency: "EUR" },
    };
  }
  return metadata;
}

/** About `kb` KB of order lines in a platform's field order, string-heavy, as a merchant echoes them. */
function orderLines(kb: number): Record<string, unknown> {
  const lines: unknown[] = [];
  for (let i = 0, size = 0; size < kb * 1024; i++) {
    const line = {
      sku: `SKU-${100000 + i}`,
      name: `Product number ${i}, colour blue, size M`,
      quantity: (i % 5) + 1,
      unit_amount: { currency_code: "EUR", value: `${i % 97}.99` },
      tax: { currency_code: "EUR", value: "3.80" },
      description: "Monthly add-on seat for the Pro plan, billed with the subscription",
      category: "DIGITAL_GOODS",
    };
    lines.push(line);
    size += JSON.stringify(line).length + 1;
  }
  return { order_lines: lines };
}

/** The renewal's compact JSON with about `kb` KB of metadata, split around its id. */
function template(kb: number): { head: string; tail: string; bytes: number } {
  const lines = process.env.PER_KB_BODY === "lines";
  const value = structuredClone(lines ? platformRenewal : renewal);
  if (kb > 0) value.resource.renewal_event.payment_detail.metadata = lines ? orderLines(kb) : denseMetadata(kb);
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
const entry = await library("index");
const libraries = { library: receiverOf(entry) };
/**
 * The card scanner's own cost: `redactNotification` of the body (what a recording or a handler's
 * `ctx.log.info({ notification })` pays), every string and key scanned; with a baseline, the baseline's.
 */
const redactions: Record<string, (value: unknown) => unknown> = { redaction: (v) => entry.redactNotification(v) };
if (process.env.BENCH_BASELINE) {
  const baseline = (await import(`${process.env.BENCH_BASELINE}/index.js`)) as typeof import("merchant-webhooks");
  Object.assign(libraries, { "library baseline": receiverOf(baseline) });
  redactions["redaction baseline"] = (v) => baseline.redactNotification(v);
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
    ...Object.entries(redactions).map(
      ([name, redact]): Step => ({
        name: `${name} ${kb}`,
        async: false,
        prepare(count) {
          const all = bodies(count).map((body) => JSON.parse(decoder.decode(body)));
          return (i) => void redact(all[i]);
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

const bySize = sizes.map((kb) => ({ kb, bytes: template(kb).bytes, steps: steps(kb) }));
const names = bySize[0]!.steps.map((step) => step.name.replace(/ \d+$/, ""));
/** Operations per batch: about the same CPU time for every size, and at least 200. */
const batchOf = (kb: number) => Math.max(200, Math.round(6_000 / (kb + 2)));
const [small, large] = [bySize[0]!, bySize.at(-1)!];
const addedKb = (large.bytes - small.bytes) / 1024;
/** µs per operation, [size][route][round]. */
const timings = bySize.map(() => names.map(() => [] as number[]));
for (let round = -1; round < rounds; round++) {
  for (let turn = 0; turn < names.length; turn++) {
    const route = (turn + Math.max(round, 0)) % names.length;
    const order = round % 2 === 0 ? bySize.entries() : [...bySize.entries()].reverse();
    for (const [at, { kb, steps }] of order) {
      const us = await timeBatch(steps[route]!, batchOf(kb));
      if (round >= 0) timings[at]![route]!.push(us);
    }
  }
}
const slopes = names.map((_, route) =>
  timings[0]![route]!.map((smallUs, round) => (timings.at(-1)![route]![round]! - smallUs) / addedKb),
);
const slopeOf = (name: string) => slopes[names.indexOf(name)]!;
const perRoundRatio = (name: string, reference: string) =>
  slopeOf(name).map((slope, round) => slope / slopeOf(reference)[round]!);
const summary = (values: number[]) => ({
  median: round2(median(values)),
  range: [round2(Math.min(...values)), round2(Math.max(...values))],
});
const perKb = {
  library: round2(median(slopeOf("library"))),
  hand_written: round2(median(slopeOf("hand-written"))),
  same_guarantees: round2(median(slopeOf("same guarantees"))),
  ...(process.env.BENCH_BASELINE ? { library_baseline: round2(median(slopeOf("library baseline"))) } : {}),
  redaction: round2(median(slopeOf("redaction"))),
  ...(process.env.BENCH_BASELINE ? { redaction_baseline: round2(median(slopeOf("redaction baseline"))) } : {}),
};
const toHand = summary(perRoundRatio("library", "hand-written"));
const baselineToHand = process.env.BENCH_BASELINE
  ? summary(perRoundRatio("library baseline", "hand-written"))
  : undefined;
console.log(
  JSON.stringify({
    rounds,
    sizes: bySize.map(({ kb, bytes }, at) => ({
      kb,
      bytes,
      us: Object.fromEntries(names.map((name, route) => [name, round2(median(timings[at]![route]!))])),
    })),
    us_per_added_kb: perKb,
    us_per_added_kb_range: Object.fromEntries(names.map((name, route) => [name, summary(slopes[route]!).range])),
    library_to_hand_written: toHand.median,
    library_to_hand_written_range: toHand.range,
    library_to_same_guarantees: summary(perRoundRatio("library", "same guarantees")).median,
    ...(baselineToHand
      ? {
          baseline_to_hand_written: baselineToHand.median,
          baseline_to_hand_written_range: baselineToHand.range,
          library_to_baseline: summary(perRoundRatio("library", "library baseline")).median,
        }
      : {}),
  }),
);
