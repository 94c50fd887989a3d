import { mkdirSync, writeFileSync } from "node:fs";
import { defineConfig } from "tsup";
import { postgresSchemaSql } from "./src/postgres/schema-sql.js";

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
      postgres: "src/postgres/index.ts",
      "postgres/knex": "src/postgres/knex.ts",
      "postgres/typeorm": "src/postgres/typeorm.ts",
      bullmq: "src/bullmq/index.ts",
      "pg-boss": "src/pg-boss/index.ts",
      testing: "src/testing/index.ts",
      client: "src/client/index.ts",
      reconcile: "src/reconcile/index.ts",
      simulator: "src/simulator/index.ts",
      lambda: "adapters/lambda.ts",
      hono: "adapters/hono.ts",
      nest: "adapters/nest.ts",
      console: "src/console/index.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    splitting: true,
    treeshake: true,
    // The inbox tables as a plain SQL file too (`merchant-webhooks/postgres/schema.sql`), for migration tools.
    async onSuccess() {
      mkdirSync("dist/postgres", { recursive: true });
      writeFileSync(
        "dist/postgres/schema.sql",
        `-- merchant-webhooks: the PostgreSQL inbox tables (what migrate() runs)\n${postgresSchemaSql()}`,
      );
    },
  },
  {
    entry: { cli: "src/cli/main.ts" },
    format: ["esm"],
    target: "node20",
    sourcemap: true,
    banner: { js: "#!/usr/bin/env node" },
  },
]);
