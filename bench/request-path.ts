// The files of src/ and adapters/ whose code runs while one valid, unsigned notification goes through
// adapters/express.ts to its answer (memory store, default options), and the named functions run in
// them; then two counts: the request path's own files (what a newcomer reads from adapter to answer)
// and all files touched, the services the path calls included (`LIBRARIES`). Measured with V8's precise coverage around the second request, so module loading and the
// first request's one-time work are left out. `npx tsx bench/request-path.ts` (the TypeScript sources,
// not the bundle, so each file counts as itself).
import inspector from "node:inspector/promises";
import path from "node:path";
import express from "express";
import { subscriptionWebhook } from "merchant-webhooks/express";
import { silentLogger } from "../test/support/capture-logger.js";
import { notification } from "../test/support/notifications.js";

const root = path.resolve(import.meta.dirname, "..");

/** The services the path calls, each read on its own when needed: not the path's own files. */
const LIBRARIES = [
  "src/idempotency/", // the store
  "src/schema/", // the schema check
  "src/logging/", // the logger and redaction
  "src/telemetry/", // spans and metrics
  "src/shared/", // helpers with no idea of the domain (reading a Node body within its limits)
  "src/receiver/parse-json.ts", // the strict JSON parse
  "src/receiver/payload-digest.ts", // the payload digest
  "src/receiver/fingerprint.ts", // and its keyed fingerprint
];
const isLibrary = (file: string) => LIBRARIES.some((place) => file === place || file.startsWith(place));
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
const files = [...ran].sort(([a], [b]) => a.localeCompare(b));
for (const [file, names] of files) console.log(`${isLibrary(file) ? "  (library) " : ""}${file}: ${names.join(", ")}`);
const own = files.filter(([file]) => !isLibrary(file));
const named = [...ran.values()].flat().filter((name) => name !== "(anonymous)" && name !== "__name");
console.log(`the request path's own files: ${own.length}`);
console.log(`all files touched: ${ran.size}, ${named.length} named functions`);
