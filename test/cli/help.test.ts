import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCli, runCliProcess } from "./run-cli.js";

describe("merchant-webhooks --help", () => {
  it("lists the commands and exits 0", async () => {
    const run = await runCli(["--help"]);
    expect(run.code).toBe(0);
    for (const command of ["replay <file|dir> --url <url>", "send <event> --url <url>", "validate <file|dir>"])
      expect(run.stdout).toContain(command);
  });

  it.each(["--version", "-v"])("prints the package version for %s and exits 0", async (flag) => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    const run = await runCli([flag]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${version}\n`);
  });

  it.each([
    [
      "replay",
      ["--concurrency <n>", "--secret <secret>", "--scheme <scheme>", "--signature-header <name>", "Exit status"],
    ],
    ["send", ["--set <path=value>", "--secret <secret>", "--print", "Exit status"]],
    ["validate", ["file:line field.path: message", "Exit status"]],
  ])("explains %s and its options", async (command, expected) => {
    const run = await runCli([command, "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Usage: merchant-webhooks ${command}`);
    for (const text of expected) expect(run.stdout).toContain(text);
  });

  it("exits 2 with the usage for an unknown command, an unknown option or a missing --url", async () => {
    const [unknown, option, missing] = await Promise.all([
      runCli(["reply", "x.json"]),
      runCli(["validate", "--strict", "x.json"]),
      runCli(["replay", "x.json"]),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "reply"');
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("--strict");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--url is required");
    expect(missing.stderr).toContain("Usage: merchant-webhooks replay");
  });

  it("as its own process, the binary's entry, exits with the command's status once its output is written", async () => {
    const [version, usage] = await Promise.all([runCliProcess(["--version"]), runCliProcess(["replay", "x.json"])]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--url is required");
  });
});
