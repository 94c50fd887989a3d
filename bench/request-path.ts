// The files of src/ and adapters/ whose code runs while one valid, unsigned notification goes through
// adapters/express.ts to its answer (memory store, default options), and the named functions run in
// them. Measured with V8's precise coverage around the second request, so module loading and the
// first request's one-time work are left out. `npx tsx bench/request-path.ts` (the TypeScript sources,
// not the bundle, so each file counts as itself).
import inspector from "node:inspector/promises";
import path from "node:path";
import express from "express";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { silentLogger } from "../test/support/capture-logger.js";
import { notification } from "../test/support/notifications.js";

const root = path.resolve(import.meta.dirname, "..");
const app = express();
app.post("/hook", subscriptionWebhook({ logger: silentLogger(), onRenew: () => {} }));
const server = app.listen(0, "127.0.0.1");
await new Promise((resolve) => server.once("listening", resolve));
const { port } = server.address() as { port: number };
const deliver = async () => {
  const res = await fetch(`http://127.0.0.1:${port}/hook`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(notification()),
  });
  if (res.status !== 200) throw new Error(`answered ${res.status}: ${await res.text()}`);
};

await deliver();
const session = new inspector.Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
await session.post("Profiler.takePreciseCoverage"); // resets the counts
await deliver();
const { result } = await session.post("Profiler.takePreciseCoverage");
server.close();

const ran = new Map<string, string[]>();
for (const script of result) {
  if (!script.url.startsWith("file://")) continue;
  const file = path.relative(root, new URL(script.url).pathname);
  if (!file.startsWith("src/") && !file.startsWith("adapters/")) continue;
  // A function with an offset past 0 is one of the file's own; the one at 0 is the module body.
  const functions = script.functions.filter((f) => f.ranges[0]!.startOffset > 0 && f.ranges[0]!.count > 0);
  if (functions.length > 0)
    ran.set(
      file,
      functions.map((f) => f.functionName || "(anonymous)"),
    );
}
for (const [file, names] of [...ran].sort()) console.log(`${file}: ${names.join(", ")}`);
const named = [...ran.values()].flat().filter((name) => name !== "(anonymous)" && name !== "__name");
console.log(`${ran.size} files, ${named.length} named functions`);
