import { Redis } from "ioredis";
import { memoryStore } from "merchant-webhooks";
import { failFastRedisOptions, redisStore } from "merchant-webhooks/redis";
import { afterAll } from "vitest";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { orderContract } from "./order-contract.js";
import { queueAtClaimContract } from "./queue-at-claim-contract.js";
import { storeContract } from "./store-contract.js";

// The memory store runs on a clock the suite moves, so its leases and retention expire without waiting.
let clock = Date.now();
const advanceClock = (ms: number) => {
  clock += ms;
};
const clockedMemoryStore = ({ retentionSeconds }: { retentionSeconds?: number }) =>
  memoryStore({ now: () => clock, ...(retentionSeconds ? { retentionSeconds } : {}) });
storeContract("memoryStore", clockedMemoryStore, advanceClock);
orderContract("memoryStore", clockedMemoryStore, advanceClock);
queueAtClaimContract("memoryStore", clockedMemoryStore, advanceClock);

// The Redis store runs on the server's clock, with short real leases; each test gets its own prefix.
const root = uniquePrefix("contract");
const redis = new Redis(REDIS_URL, failFastRedisOptions());
let stores = 0;
const freshRedisStore = ({ retentionSeconds }: { retentionSeconds?: number }) =>
  redisStore({ connection: redis, prefix: `${root}${++stores}:`, ...(retentionSeconds ? { retentionSeconds } : {}) });
storeContract("redisStore", freshRedisStore);
orderContract("redisStore", freshRedisStore);
queueAtClaimContract("redisStore", freshRedisStore);

afterAll(async () => {
  await removeKeys(redis, root);
  redis.disconnect();
});
