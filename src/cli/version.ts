import { readFileSync } from "node:fs";

/**
 * The installed package's version, read from its package.json rather than copied into the build, so
 * it cannot drift. The CLI runs as `dist/cli.js` when installed and as `src/cli/main.ts` in this
 * repository, one and two levels below the package root.
 */
export function packageVersion(): string {
  for (const path of ["../package.json", "../../package.json"]) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "merchant-webhooks" && manifest.version) return manifest.version;
    } catch {
      // not there from this location: try the next
    }
  }
  return "unknown";
}
