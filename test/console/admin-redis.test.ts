import { Redis } from "ioredis";
import { redisStore } from "merchant-webhooks/redis";
import { REDIS_URL, removeKeys, uniquePrefix } from "../support/redis.js";
import { adminContract } from "./admin-contract.js";

adminContract("redis", async () => {
  const prefix = uniquePrefix("console-store");
  const store = redisStore({ connection: REDIS_URL, prefix, timeoutMs: 2_000 });
  return {
    store,
    async cleanup() {
      await store.close();
      const redis = new Redis(REDIS_URL);
      await removeKeys(redis, prefix);
      redis.disconnect();
    },
  };
});
