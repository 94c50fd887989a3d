import { hmacVerifier } from "merchant-webhooks";
import { redrive } from "merchant-webhooks/bullmq";
import { jsonlRecordings, memoryRecordings } from "merchant-webhooks/console";
import { bodyParserErrorHandler } from "merchant-webhooks/express";
import { pgBossRedrive } from "merchant-webhooks/pg-boss";
import { migrate, postgresSchemaSql } from "merchant-webhooks/postgres";
import { describe, expect, it } from "vitest";

const SECRET = "a-secret-long-enough-for-hmac-0123456789";
/** A pool that must not be reached: the options are refused first. */
const untouchedPool = {
  query: () => {
    throw new Error("the database was reached");
  },
};

// Each entry point here once took a misspelt key in silence: a `shema` migrated into public, a
// `tolerenceSeconds` left replays unchecked, a `dryrun` redrove for real.
describe("options objects refuse a key they do not take, naming the nearest", () => {
  it.each([
    [
      "hmacVerifier",
      "tolerence",
      undefined,
      () => hmacVerifier({ secret: SECRET, header: "x-s", tolerence: 5 } as never),
    ],
    [
      "hmacVerifier's timestamp",
      "tolerenceSeconds",
      "toleranceSeconds",
      () => hmacVerifier({ secret: SECRET, header: "x-s", timestamp: { header: "x-t", tolerenceSeconds: 5 } } as never),
    ],
    ["postgresSchemaSql", "shema", "schema", () => postgresSchemaSql({ shema: "shop" } as never)],
    ["migrate", "shema", "schema", () => migrate(untouchedPool as never, { shema: "shop" } as never)],
    [
      "redrive (BullMQ)",
      "dryrun",
      "dryRun",
      () => redrive({ connection: "redis://127.0.0.1:1", name: "q", dryrun: true } as never),
    ],
    ["pgBossRedrive", "dryrun", "dryRun", () => pgBossRedrive({ boss: {} as never, name: "q", dryrun: true } as never)],
    ["memoryRecordings", "maxx", "max", () => memoryRecordings({ maxx: 5 } as never)],
    ["jsonlRecordings", "directory", undefined, () => jsonlRecordings({ dir: "/tmp", directory: "/tmp" } as never)],
    ["bodyParserErrorHandler", "loger", "logger", () => bodyParserErrorHandler({ loger: console } as never)],
  ])("%s: %s", async (_, key, nearest, call) => {
    const thrown = await (async () => call())().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ code: "MW_UNKNOWN_OPTION", option: key });
    if (nearest) expect((thrown as Error).message).toContain(`Did you mean "${nearest}"?`);
  });
});
