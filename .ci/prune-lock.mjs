// The registry this project installs from lacks some other platforms' prebuilt binaries (rollup,
// @next/swc, msgpackr-extract for darwin/win32/...). npm then writes a lockfile that names them as
// optional dependencies without locking them, and `npm ci` refuses it. This drops those dangling
// optional names so the lockfile is self-consistent; run it after `npm install` changes the lockfile.
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const locked = new Set(Object.keys(lock.packages).map((key) => key.replace(/^.*node_modules\//, "")));
let dropped = 0;
for (const entry of Object.values(lock.packages)) {
  if (!entry.optionalDependencies) continue;
  for (const name of Object.keys(entry.optionalDependencies)) {
    if (!locked.has(name)) {
      delete entry.optionalDependencies[name];
      dropped++;
    }
  }
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`prune-lock: dropped ${dropped} optional dependencies the registry cannot serve`);
