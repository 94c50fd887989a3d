import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests and examples import the package by its public name; these aliases point them at the sources so
// no build is needed to run a single test file.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^merchant-webhooks\/(express|fastify|next|node|fetch)$/, replacement: here("adapters/$1.ts") },
      { find: /^merchant-webhooks\/(redis|bullmq|testing)$/, replacement: here("src/$1/index.ts") },
      { find: /^merchant-webhooks\/(client|simulator)$/, replacement: here("src/$1/index.ts") },
      { find: /^merchant-webhooks$/, replacement: here("src/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // CI asks for a machine-readable count next to the usual output.
    reporters: process.env.VITEST_JSON_REPORT
      ? ["default", ["json", { outputFile: process.env.VITEST_JSON_REPORT }]]
      : ["default"],
  },
});
