import { readFileSync } from "node:fs";
import os from "node:os";
import { pino } from "pino";
import { createReceiver, memoryStore } from "merchant-webhooks";

/**
 * The core alone, one process (one core): distinct renewal notifications of about 1.5 KB through
 * parse, validation, claim, dispatch, completion and the log line (written to /dev/null, so pino's
 * serialization is counted but no terminal is).
 */
// Compact JSON, as a sender puts it on the wire.
const template = JSON.stringify(JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8")));
const count = Number(process.env.COUNT ?? 200_000);
const warmup = 20_000;

const encoder = new TextEncoder();
const bodies = Array.from({ length: count + warmup }, (_, i) =>
  encoder.encode(template.replace(/"id":\s*"[^"]*"/, `"id":"bench-${i}"`)),
);

let handled = 0;
const receiver = createReceiver({
  logger: pino(pino.destination({ dest: "/dev/null", sync: true })),
  idempotency: memoryStore({ maxEntries: 1_000_000 }),
  onRenew: () => {
    handled++;
  },
});
const headers = { "content-type": "application/json" };

async function run(from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    const response = await receiver.handle({ method: "POST", headers, rawBody: bodies[i]! });
    if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${response.body}`);
  }
}

await run(0, warmup);
const started = process.hrtime.bigint();
await run(warmup, warmup + count);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;

const result = {
  notifications: count,
  bytes_per_notification: bodies[0]!.byteLength,
  per_second: Math.round(count / seconds),
  us_per_notification: +((seconds * 1e6) / count).toFixed(2),
  handled: handled - warmup,
  machine: `${os.cpus()[0]?.model ?? "unknown cpu"}, ${os.cpus().length} cores, Node ${process.version}`,
};
console.log(JSON.stringify(result));
