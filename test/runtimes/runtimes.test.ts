import { afterAll, beforeAll, describe } from "vitest";
import { runtimeRows } from "./rows.js";
import { type RuntimeName, type StartedRuntime, startRuntime } from "./runtimes.js";

// The status table's rows against the fetch adapter and the Hono middleware, unsigned and signed
// (HMAC and Standard Webhooks, checked with Web Crypto), on each runtime started from its npm package.
describe.each(["bun", "deno", "workerd"] as RuntimeName[])("on %s", (runtime) => {
  let started: StartedRuntime | undefined;
  beforeAll(async () => {
    started = await startRuntime(runtime);
  }, 60_000);
  afterAll(async () => {
    await started?.stop();
  });
  runtimeRows(() => started!.origin);
});
