import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));
const hide = fileURLToPath(new URL("./fixtures/hide-otel-api.mjs", import.meta.url));

// The built package, in a process where @opentelemetry/api cannot be found: the peer dependency is optional.
const handleOne = `
  let handled = 0;
  const receiver = createReceiver({ onRenew: () => void handled++, logger: pino({ level: "silent" }) });
  const body = readFileSync("${root}test/fixtures/renewal.json");
  import("@opentelemetry/api").then(() => false, () => true).then(async (apiMissing) => {
    const response = await receiver.handle({ method: "POST", headers: { "content-type": "application/json" }, rawBody: body });
    console.log(JSON.stringify({ apiMissing, status: response.status, handled }));
  });
`;
const commonJs = `
  const { createReceiver } = require("${root}dist/index.cjs");
  const { readFileSync } = require("node:fs");
  const { pino } = require("pino");
  ${handleOne}`;
const esm = `
  import { createReceiver } from "${root}dist/index.js";
  import { readFileSync } from "node:fs";
  import { pino } from "pino";
  ${handleOne}`;

describe("without @opentelemetry/api installed", () => {
  it.each([
    ["the CommonJS build", commonJs, []],
    ["the ESM build", esm, ["--input-type=module"]],
  ])("%s receives and handles a notification", async (_name, code, flags) => {
    const { stdout } = await run(process.execPath, ["--import", hide, ...flags, "-e", code], { cwd: root });
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({ apiMissing: true, status: 200, handled: 1 });
  });
});
