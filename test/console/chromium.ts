import { mkdtempSync, rmSync } from "node:fs";
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
