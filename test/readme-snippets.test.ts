import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface Block {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** The line its code starts on. */
  line: number;
  code: string;
}

/** Each ```ts block of a Markdown file with the line its code starts on. */
function tsBlocks(file: string): Block[] {
  const blocks: Block[] = [];
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```ts") continue;
    const end = lines.indexOf("```", i + 1);
    blocks.push({ file, line: i + 2, code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}

/** The README and every page of docs/. */
const DOCUMENTS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];

// What the snippets call that is the merchant's own code, declared rather than written.
const STUBS = `declare function extendAccess(subscriptionId: string, signal?: AbortSignal): Promise<void>;
declare function revokeAccess(subscriptionId: string): Promise<void>;
declare const app: import("express").Express;
declare const handlers: import("merchant-webhooks").SubscriptionHandlers;
`;
const HANDLERS_MODULE = `import type { SubscriptionHandlers } from "merchant-webhooks";
export declare const handlers: SubscriptionHandlers;
`;

/**
 * A project beside the repository whose `merchant-webhooks` is this package as built (`dist`, through
 * package.json `exports`), with the repository's other packages for the frameworks the snippets import.
 */
function snippetProject(blocks: Block[]): string {
  const dir = mkdtempSync(join(tmpdir(), "mw-readme-"));
  mkdirSync(join(dir, "node_modules"));
  for (const name of readdirSync(join(ROOT, "node_modules"))) {
    if (name !== "merchant-webhooks" && !name.startsWith("."))
      symlinkSync(join(ROOT, "node_modules", name), join(dir, "node_modules", name));
  }
  symlinkSync(ROOT, join(dir, "node_modules", "merchant-webhooks"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "readme-snippets", private: true, type: "module" }));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        lib: ["ES2023", "DOM"],
        module: "nodenext",
        moduleResolution: "nodenext",
        types: ["node"],
        skipLibCheck: true,
        allowJs: false,
        // Nest's decorators (docs/nest.md), as a Nest app compiles them.
        experimentalDecorators: true,
      },
      include: ["snippets/*.ts", "src/*.ts"],
    }),
  );
  mkdirSync(join(dir, "snippets"));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, "snippets", "stubs.d.ts"), STUBS);
  writeFileSync(join(dir, "src", "webhook-handlers.ts"), HANDLERS_MODULE);
  // `export {}` makes each snippet a module of its own, as a file in a merchant's project is.
  for (const [i, block] of blocks.entries())
    writeFileSync(join(dir, "snippets", `snippet-${i}.ts`), `${block.code}\nexport {};\n`);
  return dir;
}

describe("README.md and docs/", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("have ts code blocks that all compile, strictly, against the built package", async () => {
    expect(existsSync(join(ROOT, "dist", "index.d.ts")), "run `npm run build` first (npm test does)").toBe(true);
    const blocks = DOCUMENTS.flatMap(tsBlocks);
    expect(blocks.length).toBeGreaterThan(30);
    // Every page with code is in the check (a page whose blocks were all skipped would prove nothing).
    expect(new Set(blocks.map((block) => block.file)).size).toBeGreaterThan(8);
    const dir = snippetProject(blocks);
    dirs.push(dir);
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", dir],
      { cwd: dir },
    ).catch((err: { stdout: string }) => err);
    // Point each error at the Markdown line it comes from.
    const errors = stdout
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) =>
        line.replace(/^snippets\/snippet-(\d+)\.ts\((\d+),(\d+)\)/, (_all, index, row) => {
          const block = blocks[Number(index)]!;
          return `${block.file}:${block.line + Number(row) - 1}`;
        }),
      );
    expect(errors).toEqual([]);
  }, 180_000);
});
