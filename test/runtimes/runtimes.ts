// Bundling worker.ts, and starting Bun, Deno or workerd on it from the binaries their npm packages
// ship (devDependencies: bun, deno, workerd), each on an ephemeral port of 127.0.0.1.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { freePort } from "../support/redis.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const here = (path: string) => join(ROOT, path);

export type RuntimeName = "bun" | "deno" | "workerd";

/** Where each package puts its binary (bun's postinstall moves it into bun/bin when it runs). */
const BINARIES: Record<RuntimeName, string[]> = {
  bun: [
    "node_modules/bun/bin/bun.exe",
    "node_modules/@oven/bun-linux-x64/bin/bun",
    "node_modules/@oven/bun-linux-x64-baseline/bin/bun",
  ],
  deno: ["node_modules/@deno/linux-x64-glibc/deno", "node_modules/deno/deno"],
  workerd: ["node_modules/@cloudflare/workerd-linux-64/bin/workerd", "node_modules/workerd/bin/workerd"],
};

export function binaryOf(runtime: RuntimeName): string | undefined {
  return BINARIES[runtime].map(here).find((path) => existsSync(path));
}

/** worker.ts and what it imports as one ES module, the package's own subpaths taken from the sources. */
async function bundle(dir: string): Promise<void> {
  await build({
    entryPoints: [here("test/runtimes/worker.ts")],
    outfile: join(dir, "worker.mjs"),
    bundle: true,
    format: "esm",
    // The browser field: pino's console logger, no node: builtin anywhere.
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
    define: { "process.pid": "0" },
    plugins: [
      {
        name: "merchant-webhooks-sources",
        setup(builder) {
          builder.onResolve({ filter: /^merchant-webhooks(\/.*)?$/ }, ({ path }) => {
            const sub = path.slice("merchant-webhooks".length + 1);
            if (!sub) return { path: here("src/index.ts") };
            const adapter = here(`adapters/${sub}.ts`);
            return { path: existsSync(adapter) ? adapter : here(`src/${sub}/index.ts`) };
          });
        },
      },
    ],
  });
}

export interface StartedRuntime {
  origin: string;
  stop(): Promise<void>;
}

/** Bundle, start `runtime` on it, and resolve once it answers GET /runtime as that runtime. */
export async function startRuntime(runtime: RuntimeName): Promise<StartedRuntime> {
  const binary = binaryOf(runtime);
  if (!binary) throw new Error(`no ${runtime} binary under node_modules: run npm ci`);
  const dir = mkdtempSync(join(tmpdir(), `mw-${runtime}-`));
  await bundle(dir);
  const port = await freePort();
  let child: ChildProcess;
  if (runtime === "bun") {
    writeFileSync(
      join(dir, "serve.mjs"),
      `import worker from "./worker.mjs";\nBun.serve({ port: ${port}, hostname: "127.0.0.1", fetch: worker.fetch });\n`,
    );
    child = spawn(binary, ["run", join(dir, "serve.mjs")], { stdio: ["ignore", "ignore", "pipe"] });
  } else if (runtime === "deno") {
    writeFileSync(
      join(dir, "serve.mjs"),
      `import worker from "./worker.mjs";\nDeno.serve({ port: ${port}, hostname: "127.0.0.1", onListen() {} }, worker.fetch);\n`,
    );
    child = spawn(binary, ["run", "--allow-net=127.0.0.1", "--no-prompt", join(dir, "serve.mjs")], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(dir, ".deno") },
    });
  } else {
    writeFileSync(
      join(dir, "config.capnp"),
      `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.mjs", esModule = embed "worker.mjs") ],
  compatibilityDate = "2025-09-01",
);
`,
    );
    child = spawn(binary, ["serve", join(dir, "config.capnp")], { stdio: ["ignore", "ignore", "pipe"], cwd: dir });
  }
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const origin = `http://127.0.0.1:${port}`;
  for (;;) {
    const answer = await Promise.race([
      fetch(`${origin}/runtime`).then(
        (response) => response.json() as Promise<Record<RuntimeName, boolean>>,
        () => undefined,
      ),
      exited.then((code) => {
        throw new Error(`${runtime} exited (${code}) before serving: ${stderr}`);
      }),
    ]);
    if (answer) {
      if (!answer[runtime]) throw new Error(`port ${port} is not served by ${runtime}: ${JSON.stringify(answer)}`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    origin,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
