import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const FRAMEWORKS = ["express", "fastify", "next", "react", "hono", "@nestjs"];

/** The bare modules an adapter entry loads at run time (type-only imports are erased). */
async function runtimeImports(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [`${root}/${entry}`],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "neutral",
    logLevel: "silent",
    // Keep every package and builtin out of the bundle, so each shows up as an import.
    plugins: [
      {
        name: "externals",
        setup(builder) {
          builder.onResolve({ filter: /^[^./]/ }, (args) => ({ path: args.path, external: true }));
        },
      },
    ],
  });
  const imports = Object.values(result.metafile.outputs).flatMap((output) => output.imports.map((found) => found.path));
  return [...new Set(imports)].sort();
}

const packageOf = (specifier: string) => specifier.split("/")[0]!;

describe("adapter entries", () => {
  it.each([
    ["adapters/fastify.ts", []],
    ["adapters/next.ts", []],
    ["adapters/node.ts", []],
    ["adapters/fetch.ts", []],
    ["adapters/express.ts", []],
    ["adapters/lambda.ts", []],
    ["adapters/hono.ts", ["hono"]],
    ["adapters/nest.ts", ["@nestjs", "@nestjs"]],
  ])("%s loads no framework at run time", async (entry, allowed: string[]) => {
    const frameworks = (await runtimeImports(entry)).map(packageOf).filter((name) => FRAMEWORKS.includes(name));
    expect(frameworks).toEqual(allowed);
  });

  it.each(["adapters/fetch.ts", "adapters/hono.ts"])(
    "%s loads no node: builtin, so it runs on Workers, Deno and Bun",
    async (entry) => {
      const builtins = (await runtimeImports(entry)).filter((name) => name.startsWith("node:"));
      expect(builtins).toEqual([]);
    },
  );

  it("the verifiers load nothing but Web Crypto", async () => {
    expect(await runtimeImports("src/verify/index.ts")).toEqual([]);
  });
});
