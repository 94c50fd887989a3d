import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const FINGERPRINT = new URL("../../src/receiver/fingerprint.ts", import.meta.url).pathname;

/** Sixteen digits from `seed`, computed alike in the child and here. */
const cardFrom = (seed: number) =>
  Array.from({ length: 16 }, (_, i) => (i === 0 ? 4 : Math.floor(seed / 10 ** (i % 8)) % 10)).join("");

/**
 * The child makes the card number from a seed inside a function, so once that returns, the only
 * copies left are those the code under test keeps: neither its source nor its arguments hold one.
 */
const CHILD = `
import { writeHeapSnapshot } from "node:v8";
import { payloadFingerprinter } from ${JSON.stringify(FINGERPRINT)};
const fingerprint = payloadFingerprinter("a-key-of-sixteen-bytes-or-more");
const cardFrom = ${cardFrom.toString()};
(function deliver(seed) {
  const card = cardFrom(seed);
  for (let i = 0; i < 50; i++) {
    const body = JSON.parse('{"metadata":{"' + card + '":"a","x' + card.slice(1) + '":"b","ok":1}}');
    fingerprint.within(body, 64);
    fingerprint(body);
  }
})(Number(process.argv[3]));
globalThis.gc();
writeHeapSnapshot(process.argv[2]);
`;

describe("card numbers in payload keys", () => {
  it("are not kept in the process after their request, by the fingerprint's cache of keys", () => {
    const dir = mkdtempSync(join(tmpdir(), "mw-heap-"));
    try {
      const script = join(dir, "child.ts");
      writeFileSync(script, CHILD);
      const seed = 10_000_000 + Math.floor(Math.random() * 89_999_999);
      const file = join(dir, "heap.heapsnapshot");
      execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", script, file, String(seed)], {
        timeout: 60_000,
      });
      const snapshot = readFileSync(file, "utf8");
      const card = cardFrom(seed);
      expect(snapshot).not.toContain(card);
      expect(snapshot).not.toContain(`x${card.slice(1)}`);
      // The snapshot does hold the strings the process keeps: the cache's key without digits.
      expect(snapshot).toContain('"metadata"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
