import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FIXTURES = join(ROOT, "test", "fixtures", "consumer");

/** The TypeScript majors a merchant may compile with: the one this repository pins, and the current one. */
const TYPESCRIPTS = { "5.9": "typescript", "7": "typescript7" } as const;
const RESOLUTIONS = {
  node16: { module: "node16", moduleResolution: "node16" },
  bundler: { module: "esnext", moduleResolution: "bundler" },
} as const;

const run = (command: string, args: string[], cwd: string) =>
  exec(command, args, { cwd, maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );

/** `typos.ts` ends each line that must not compile with `// typo`. */
const typoLines = (source: string) =>
  source.split("\n").flatMap((line, i) => (line.trimEnd().endsWith("// typo") ? [i + 1] : []));

/**
 * The package as a merchant gets it: `npm pack`, then `npm install` of the tarball into a fresh
 * project with nothing of this repository's in reach, compiled with `tsc --strict`.
 */
describe("a consumer project with the packed package installed", () => {
  let dir: string;
  let version: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "mw-consumer-"));
    version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
    const pack = await run("npm", ["pack", "--silent", "--pack-destination", dir], ROOT);
    expect(pack.code, pack.stderr).toBe(0);
    const tarball = join(dir, pack.stdout.trim().split("\n").at(-1)!);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const install = await run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        tarball,
        "typescript@5.9",
        "typescript7@npm:typescript@^7",
        "@types/node@20",
      ],
      dir,
    );
    expect(install.code, install.stderr).toBe(0);
    mkdirSync(join(dir, "src"));
    for (const name of ["correct.ts", "correct-cjs.cts", "typos.ts"])
      writeFileSync(join(dir, "src", name), readFileSync(join(FIXTURES, name)));
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function tsc(typescript: keyof typeof TYPESCRIPTS, resolution: keyof typeof RESOLUTIONS, files: string[]) {
    const config = `tsconfig.${resolution}.${files.join("-")}.json`;
    writeFileSync(
      join(dir, config),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          lib: ["ES2023", "DOM"],
          types: ["node"],
          // The current major, which is fast, also checks the package's own declaration files; under 5.9
          // that check of every installed .d.ts (zod, pino, @types/node) would take minutes.
          skipLibCheck: typescript !== "7",
          ...RESOLUTIONS[resolution],
        },
        files: files.map((file) => `src/${file}`),
      }),
    );
    return run(process.execPath, [join(dir, "node_modules", TYPESCRIPTS[typescript], "bin", "tsc"), "-p", config], dir);
  }

  const matrix = Object.keys(TYPESCRIPTS).flatMap((ts) => Object.keys(RESOLUTIONS).map((res) => [ts, res])) as [
    keyof typeof TYPESCRIPTS,
    keyof typeof RESOLUTIONS,
  ][];

  // One compilation per combination, of correct and wrong code together: tsc costs most of this test.
  it.each(matrix)(
    "TypeScript %s, %s resolution: correct code compiles, every typo is refused",
    async (typescript, resolution) => {
      const files =
        resolution === "node16" ? ["correct.ts", "correct-cjs.cts", "typos.ts"] : ["correct.ts", "typos.ts"];
      const result = await tsc(typescript, resolution, files);
      const errors = result.stdout.split("\n").filter((line) => / error TS\d+/.test(line));
      expect(errors.filter((line) => !line.startsWith("src/typos.ts("))).toEqual([]);
      const failing = [
        ...new Set(
          errors
            .map((line) => /^src\/typos\.ts\((\d+),/.exec(line)?.[1])
            .filter(Boolean)
            .map(Number),
        ),
      ];
      expect(failing).toEqual(typoLines(readFileSync(join(FIXTURES, "typos.ts"), "utf8")));
    },
    180_000,
  );

  it("installs the CLI, which prints the package version", async () => {
    const result = await run(join(dir, "node_modules", ".bin", "merchant-webhooks"), ["--version"], dir);
    expect(result.stdout).toBe(`${version}\n`);
  });

  it("ships the license", () => {
    expect(readFileSync(join(dir, "node_modules", "merchant-webhooks", "LICENSE"), "utf8")).toMatch(/^MIT License/);
  });
});
