import { createPlatformSimulator, runScenario, ScenarioError } from "merchant-webhooks/simulator";
import { describe, expect, it } from "vitest";
import { runSend } from "../../src/cli/commands/send.js";
import { captureIo } from "./capture-io.js";

async function printedEventType(name: string): Promise<string> {
  const io = captureIo();
  expect(await runSend([name, "--print"], io)).toBe(0);
  return JSON.parse(io.stdout).event_type;
}

describe("event names agree in send and in scenario files, in any case", () => {
  it.each([
    ["cancel", "SUBSCRIPTION_CANCELLED"],
    ["cancelled", "SUBSCRIPTION_CANCELLED"],
    ["onCancel", "SUBSCRIPTION_CANCELLED"],
    ["SUBSCRIPTION_CANCELLED", "SUBSCRIPTION_CANCELLED"],
    ["subscription_cancelled", "SUBSCRIPTION_CANCELLED"],
    ["Cancel", "SUBSCRIPTION_CANCELLED"],
    ["create", "SUBSCRIPTION_CREATED"],
    ["ONCREATED", "SUBSCRIPTION_CREATED"],
    ["suspend", "SUBSCRIPTION_SUSPENDED"],
    ["onResume", "SUBSCRIPTION_RESUMED"],
    ["Renew", "SUBSCRIPTION_RENEW"],
    ["unknown", "UNKNOWN"],
    ["SUBSCRIPTION_PAUSED", "SUBSCRIPTION_PAUSED"],
  ])("send %s --print builds %s", async (name, eventType) => {
    expect(await printedEventType(name)).toBe(eventType);
  });

  it("an unknown name is a usage error listing every valid name", async () => {
    const io = captureIo();
    expect(await runSend(["cancle", "--print"], io)).toBe(2);
    expect(io.stderr).toContain('unknown event "cancle": use one of these names (any case)');
    expect(io.stderr).toMatch(/SUBSCRIPTION_CANCELLED +cancel, cancelled, onCancel\n/);
    expect(io.stderr).toMatch(/SUBSCRIPTION_CREATED +create, created, onCreated\n/);
    expect(io.stderr).toMatch(/SUBSCRIPTION_RENEW +renew, onRenew\n/);
  });

  it("a scenario names events the same ways, and an unknown command lists the commands", async () => {
    const sim = createPlatformSimulator({ webhookUrl: "http://127.0.0.1:1/hook", retrySchedule: [0] });
    try {
      const out = await runScenario(
        sim,
        ["CREATE a", "onRenew a", "suspended a", "SUBSCRIPTION_RESUMED a", "Cancelled a too expensive"].join("\n"),
      );
      const types = out
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => line.split(" ").at(-1));
      expect(out).toMatch(/^created a SUB-/);
      expect(types).toEqual([
        "SUBSCRIPTION_RENEW",
        "SUBSCRIPTION_SUSPENDED",
        "SUBSCRIPTION_RESUMED",
        "SUBSCRIPTION_CANCELLED",
      ]);
      const wrong = runScenario(sim, "create b\ncancle b");
      await expect(wrong).rejects.toThrow(ScenarioError);
      await expect(wrong).rejects.toThrow(
        'line 2: unknown command "cancle": the commands are create, renew, cancel, suspend, resume, settle, sleep, log, pending',
      );
    } finally {
      await sim.close();
    }
  });
});
