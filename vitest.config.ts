import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests and examples import the package by its public name; these aliases point them at the sources so
// no build is needed to run a single test file.
export default defineConfig({
  resolve: {
    alias: [
      {
        find: /^merchant-webhooks\/(express|fastify|next|node|fetch|lambda|hono|nest)$/,
        replacement: here("adapters/$1.ts"),
      },
      { find: /^merchant-webhooks\/(schema|redis|postgres|bullmq|testing)$/, replacement: here("src/$1/index.ts") },
      { find: /^merchant-webhooks\/pg-boss$/, replacement: here("src/pg-boss/index.ts") },
      { find: /^merchant-webhooks\/postgres\/(knex|typeorm)$/, replacement: here("src/postgres/$1.ts") },
      { find: /^merchant-webhooks\/(client|simulator|console|reconcile)$/, replacement: here("src/$1/index.ts") },
      { find: /^merchant-webhooks$/, replacement: here("src/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // Type tests (`expectTypeOf`, `@ts-expect-error`) in *.test-d.ts are checked by tsc as part of the run.
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
    // One line naming a server that is down, and how to start it, before any test waits on it.
    globalSetup: ["./test/setup/servers-reachable.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // CI asks for a machine-readable count next to the usual output.
    reporters: process.env.VITEST_JSON_REPORT
      ? ["default", ["json", { outputFile: process.env.VITEST_JSON_REPORT }]]
      : ["default"],
  },
});
