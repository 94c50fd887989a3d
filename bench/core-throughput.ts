import os from "node:os";
import { createReceiver, memoryStore } from "merchant-webhooks";
import { pino } from "pino";
import { type Step, timeSteps } from "./cpu-rounds.js";
import { notificationText } from "./notification-body.js";

/**
 * The core alone, one process (one core): distinct ~2.2 KB renewals through parse, validation, claim,
 * dispatch, completion and the log line (written to /dev/null, so pino's serialization is counted but
 * no terminal is), against a plain `JSON.parse` of the same body, batches taking turns.
 */
const size = Number(process.env.CORE_BATCH ?? 10_000);
const rounds = Number(process.env.CORE_ROUNDS ?? 9);

const encoder = new TextEncoder();
let next = 0;
const texts = (count: number) => Array.from({ length: count }, () => notificationText(`bench-${next++}`));

let handled = 0;
const receiver = createReceiver({
  logger: pino(pino.destination({ dest: "/dev/null", sync: true })),
  idempotency: memoryStore({ maxEntries: 1_000_000 }),
  onRenew: () => {
    handled++;
  },
});
const headers = { "content-type": "application/json" };

const core: Step = {
  name: "core (memory store)",
  async: true,
  prepare(count) {
    const bodies = texts(count).map((text) => encoder.encode(text));
    return async (i) => {
      const response = await receiver.handle({ method: "POST", headers, rawBody: bodies[i]! });
      if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${response.body}`);
    };
  },
};
const parse: Step = {
  name: "JSON.parse",
  prepare(count) {
    const bodies = texts(count);
    return (i) => JSON.parse(bodies[i]!);
  },
};

const [coreTiming, parseTiming] = await timeSteps([core, parse], { rounds, size, warmup: 20_000 });
const result = {
  notifications: rounds * size,
  bytes_per_notification: encoder.encode(notificationText("bench-0")).byteLength,
  per_second: Math.round(1e6 / coreTiming!.us),
  us_per_notification: coreTiming!.us,
  json_parse_us: parseTiming!.us,
  core_to_json_parse: Math.round((coreTiming!.us / parseTiming!.us) * 100) / 100,
  handled,
  machine: `${os.cpus()[0]?.model ?? "unknown cpu"}, ${os.cpus().length} cores, Node ${process.version}`,
};
console.log(JSON.stringify(result));
