import { defineConfig } from "tsup";

// One entry per public subpath (see package.json "exports").
export default defineConfig([
  {
    entry: {
      index: "src/index.ts",
      express: "adapters/express.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node20",
    splitting: true,
    treeshake: true,
  },
]);
