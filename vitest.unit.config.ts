import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * `npm run test:unit`: the tests that need no server (no Redis, no PostgreSQL) and no build. Measured
 * on a 2-core machine shared with other work (load 17): 5 min 43 s of wall time for 55 s of CPU (the
 * CLI tests run the command line in-process; a TypeScript loader started per case had cost 11 s more).
 * A test file needs a server when it names REDIS_URL or DATABASE_URL (read directly or from
 * test/support) or uses the Redis fixtures; those are left out by what they contain, so a new server
 * test is left out without a list to keep. The slow packaging and framework-build tests are left out
 * by name.
 */
const NEEDS_A_SERVER =
  /\b(REDIS_URL|DATABASE_URL)\b|fixtures\/redis|cluster\/fixtures|support\/postgres|from "ioredis"|from "pg"/;
const SLOW = [
  "test/package.test.ts",
  "test/consumer-project.test.ts",
  "test/readme-snippets.test.ts",
  "test/examples/**",
  "test/e2e/**",
  "test/cluster/**",
  "test/conformance/next-*.test.ts",
  // Two receivers on Redis, stopped and frozen; and the built package loaded without OpenTelemetry.
  "test/faults/**",
  "test/telemetry/without-api.test.ts",
];
const testFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name))
      : entry.name.endsWith(".test.ts")
        ? [join(dir, entry.name)]
        : [],
  );
const serverTests = testFiles("test").filter((file) => NEEDS_A_SERVER.test(readFileSync(file, "utf8")));

// Built from the full suite's config rather than merged into it: a merge would append to its lists,
// and the unit run must drop the global setup that checks the servers.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    exclude: [...SLOW, ...serverTests, "node_modules/**"],
    globalSetup: [],
    typecheck: { enabled: false },
  },
});
