import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

/** Debian's chromium package; `.ci/run` installs it as it installs Redis. Nothing is downloaded here. */
export const CHROMIUM = "/usr/bin/chromium";

/** Headless Chromium with a profile of its own, answering Basic auth with `credentials`. */
export async function consoleBrowser(credentials: { username: string; password: string }) {
  const userDataDir = mkdtempSync(join(tmpdir(), "mw-console-chromium-"));
  const context: BrowserContext = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    httpCredentials: credentials,
    viewport: { width: 1280, height: 860 },
  });
  const problems: string[] = [];
  return {
    problems,
    /** A page that records every console error (a CSP violation is one) and accepts every confirm. */
    async openPage(): Promise<Page> {
      const page = await context.newPage();
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text());
      });
      page.on("pageerror", (err) => problems.push(err.message));
      page.on("dialog", (dialog) => void dialog.accept());
      return page;
    },
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** On a dead letter's page: Redrive (a POST with the page's token, after a confirm), then wait for it to complete. */
export async function redriveUntilCompleted(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Redrive" }).click();
  await page.waitForURL(/done=/);
  expect(await page.locator(".notice").textContent()).toContain("redriven 1 of 1");
  // The page refreshes itself while the notification is queued or running.
  await expect
    .poll(() => page.locator("table .state").first().textContent(), { timeout: 30_000, interval: 500 })
    .toBe("completed");
}

/**
 * axe-core, the accessibility engine (a devDependency), evaluated into the page over the DevTools
 * protocol: the console's CSP allows no inline script, and the protocol is not subject to it.
 */
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

interface AxeViolation {
  id: string;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/** What axe finds against WCAG 2.1 A and AA on the page as it stands, in light and in dark colours. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    await page.evaluate(AXE);
    const violations = await page.evaluate(async (tags) => {
      const axe = (
        globalThis as unknown as {
          axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
        }
      ).axe;
      const result = await axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
      return result.violations.map((v) => ({
        id: v.id,
        help: v.help,
        nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${n.failureSummary ?? ""}`),
      }));
    }, WCAG_21_AA);
    for (const v of violations)
      found.push(
        `${colorScheme} ${new URL(page.url()).pathname} ${v.id} (${v.help}):\n  ${v.nodes.slice(0, 4).join("\n  ")}`,
      );
  }
  await page.emulateMedia({ colorScheme: "light" });
  return found;
}
