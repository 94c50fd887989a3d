import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { SCRIPTS as BULLMQ_SCRIPTS } from "../../src/bullmq/lua/scripts.generated.js";
import { SCRIPTS as RECONCILE_SCRIPTS } from "../../src/reconcile/lua/scripts.generated.js";
import { SCRIPTS as REDIS_SCRIPTS } from "../../src/redis/lua/scripts.generated.js";
import { COMMANDS } from "../../src/redis/scripts.js";
import { REDIS_URL } from "../support/redis.js";

/**
 * The Lua scripts live as `.lua` files (src/<folder>/lua/, shared steps in lua/includes/), turned into
 * `scripts.generated.ts` by .ci/build-lua.mjs. Each script compiles on the real Redis, each file is
 * used, and the generated modules match the files they come from.
 */
const FOLDERS = {
  "src/redis/lua": REDIS_SCRIPTS,
  "src/bullmq/lua": BULLMQ_SCRIPTS,
  "src/reconcile/lua": RECONCILE_SCRIPTS,
} as const;
const luaFiles = (folder: string) => readdirSync(folder).filter((file) => file.endsWith(".lua"));
const constantOf = (file: string) =>
  file
    .replace(/-\d+\.lua$/, "")
    .toUpperCase()
    .replaceAll("-", "_");
const sourcesOf = (folder: string) =>
  readdirSync(join(folder, ".."))
    .filter((file) => file.endsWith(".ts"))
    .map((file) => readFileSync(join(folder, "..", file), "utf8"));

const redis = new Redis(REDIS_URL, { lazyConnect: true });
afterAll(() => redis.quit());

describe("Lua scripts as .lua files", () => {
  it("has the generated modules up to date with the .lua files", () => {
    // Exits 1, naming the file, when a .lua file changed and `npm run build:lua` was not run.
    expect(() => execFileSync(process.execPath, [".ci/build-lua.mjs", "--check"], { stdio: "pipe" })).not.toThrow();
  });

  it("has each generated module as the build writes it", () => {
    const script = `import("./.ci/build-lua.mjs").then((m) => process.stdout.write(m.generatedModule("src/redis/lua")))`;
    const fresh = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(readFileSync("src/redis/lua/scripts.generated.ts", "utf8")).toBe(fresh);
    expect(fresh).toContain("ORDERED_CLAIM:");
  });

  it("has every .lua file a script in use, named with its key count, and every include included", () => {
    for (const [folder, scripts] of Object.entries(FOLDERS)) {
      const files = luaFiles(folder);
      expect(files.length).toBeGreaterThan(0);
      expect(Object.keys(scripts).sort()).toEqual(files.map(constantOf).sort());
      const sources = sourcesOf(folder).join("\n");
      for (const name of Object.keys(scripts))
        expect(sources, `${folder}: ${name} is not used`).toMatch(
          new RegExp(`SCRIPTS\\.${name}\\b|\\{[^}]*\\b${name}\\b[^}]*\\} = SCRIPTS`),
        );
      const texts = files.map((file) => readFileSync(join(folder, file), "utf8")).join("\n");
      const includes = readdirSync(folder, { withFileTypes: true }).some((entry) => entry.name === "includes")
        ? luaFiles(join(folder, "includes"))
        : [];
      const included = (name: string) =>
        texts.includes(`--@include ${name}\n`) ||
        includes.some((other) =>
          readFileSync(join(folder, "includes", other), "utf8").includes(`--@include ${name}\n`),
        );
      for (const include of includes)
        expect(included(include.replace(/\.lua$/, "")), `${folder}/includes/${include} is not included`).toBe(true);
    }
  });

  it("resolves includes into the script text, with no directive or file header left", () => {
    expect(COMMANDS.mwIdemClaim).toBe(REDIS_SCRIPTS.CLAIM);
    expect(REDIS_SCRIPTS.CLAIM).toContain("local function now_ms()");
    expect(REDIS_SCRIPTS.ORDERED_CLAIM).toContain("local function first_waiter(");
    for (const scripts of Object.values(FOLDERS))
      for (const lua of Object.values(scripts)) {
        expect(lua).not.toContain("--@include");
        expect(lua.startsWith("--")).toBe(false);
      }
  });

  it("compiles every script on Redis (SCRIPT LOAD answers its SHA-1)", async () => {
    await redis.connect();
    for (const scripts of Object.values(FOLDERS))
      for (const [name, lua] of Object.entries(scripts)) {
        const sha = createHash("sha1").update(lua).digest("hex");
        expect(await redis.script("LOAD", lua), name).toBe(sha);
      }
  });
});
