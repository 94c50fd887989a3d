import { defineConfig } from "tsup";

// One entry per public subpath (see package.json "exports"); the CLI is ESM-only with a shebang.
export default defineConfig([
  {
    entry: {
      index: "src/index.ts",
      express: "adapters/express.ts",
      fastify: "adapters/fastify.ts",
      next: "adapters/next.ts",
      node: "adapters/node.ts",
      fetch: "adapters/fetch.ts",
      schema: "src/schema/index.ts",
      redis: "src/redis/index.ts",
      bullmq: "src/bullmq/index.ts",
      testing: "src/testing/index.ts",
      client: "src/client/index.ts",
      simulator: "src/simulator/index.ts",
      lambda: "adapters/lambda.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    splitting: true,
    treeshake: true,
  },
  {
    entry: { cli: "src/cli/main.ts" },
    format: ["esm"],
    target: "node20",
    sourcemap: true,
    banner: { js: "#!/usr/bin/env node" },
  },
]);
