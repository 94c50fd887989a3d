import { readFileSync } from "node:fs";
import { createReceiver, memoryStore } from "merchant-webhooks";
import { pino } from "pino";

/**
 * Resident memory after N distinct notifications through the memory store at its default cap
 * (100,000 records): the store must stop growing at the cap, whatever N is.
 */
const total = Number(process.env.MEMORY_NOTIFICATIONS ?? 1_000_000);
const template = JSON.stringify(
  JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8")),
);
// The envelope id comes first in the fixture; everything after it is kept as it is.
const idEnd = template.indexOf('"', template.indexOf('"id":"') + 6) + 1;
const head = template.slice(0, template.indexOf('"id":"'));
const tail = template.slice(idEnd);
const encoder = new TextEncoder();
const store = memoryStore();
const receiver = createReceiver({ logger: pino({ level: "silent" }), idempotency: store, onRenew: () => {} });
const headers = { "content-type": "application/json" };

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
const samples: { after: number; rss_mb: number; heap_mb: number; records: number }[] = [];
for (let i = 1; i <= total; i++) {
  const response = await receiver.handle({
    method: "POST",
    headers,
    rawBody: encoder.encode(`${head}"id":"mem-${i}"${tail}`),
  });
  if (response.status !== 200) throw new Error(`unexpected ${response.status}`);
  if (i % (total / 10) === 0) {
    globalThis.gc?.();
    const usage = process.memoryUsage();
    samples.push({ after: i, rss_mb: mb(usage.rss), heap_mb: mb(usage.heapUsed), records: store.size });
  }
}
console.log(JSON.stringify({ notifications: total, cap: 100_000, samples }, null, 2));
