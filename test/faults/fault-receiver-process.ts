// A receiver process for the fault suite: node:http + the core + redisStore, whose handler leaves a
// durable trace of what it did on another Redis (the "journal", never the one the suite stops), so the
// trace survives this process being killed and the store's Redis restarting. Configured by environment:
// STORE_URL, STORE_PREFIX (the idempotency store), JOURNAL_URL, JOURNAL (key prefix of the journal
// lists), LEASE_MS. Prints "listening <port>" when it serves.
//
// Journal entries are "<pid>:<notification id>", appended (RPUSH) to three lists:
//   started    the handler began
//   effects    the handler's effect, at a random point inside the handler
//   completed  the store recorded the completion (after the handler returned)
// so the suite can tell, for a killed process, which notifications it left between effect and completion.
import { Redis } from "ioredis";
import { pino } from "pino";
import { createReceiver } from "../../src/receiver/create-receiver.js";
import { redisStore } from "../../src/redis/index.js";
import { onCompletion } from "../support/on-completion.js";
import { serveReceiver } from "../support/serve-receiver.js";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const journal = env("JOURNAL");
// An ordinary client (offline queue, retries): the journal must not lose an entry to a blip.
const journalRedis = new Redis(env("JOURNAL_URL"));
const note = (list: "started" | "effects" | "completed", id: string) =>
  journalRedis.rpush(`${journal}${list}`, `${process.pid}:${id}`);
const leaseMs = Number(env("LEASE_MS"));
const store = redisStore({ connection: env("STORE_URL"), prefix: env("STORE_PREFIX"), leaseMs });

/** The store, with each successful completion (including ones retried in the background) journalled. */
const journalledStore = onCompletion(store, (id) => note("completed", id));

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const receiver = createReceiver({
  idempotency: journalledStore,
  logger: pino({ level: "silent" }),
  leaseMs,
  // 5-20 ms with the effect somewhere inside, as a handler that writes and then calls something else:
  // a kill then lands before the effect, after it, or between the handler's end and the completion.
  onRenew: async (notification) => {
    const total = 5 + Math.random() * 15;
    const before = Math.random() * total;
    await note("started", notification.id);
    await pause(before);
    await note("effects", notification.id);
    await pause(total - before);
  },
});

serveReceiver(receiver);
