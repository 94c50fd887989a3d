import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { readNodeBody } from "../../src/shared/read-node-body.js";

/** A request stream whose body the test writes. */
const request = () => Object.assign(new PassThrough(), { headers: {} }) as PassThrough & IncomingMessage;

describe("reading a Node request body under a time limit", () => {
  it("stops each read that outlasts its limit, and no read that ends in time", async () => {
    const slow = request();
    const quick = request();
    const slowRead = readNodeBody(slow, 1024, 100);
    const quickRead = readNodeBody(quick, 1024, 100);
    slow.write("{");
    quick.end('{"a":1}');
    expect(await quickRead).toEqual({ ok: true, bytes: Buffer.from('{"a":1}') });
    expect(await slowRead).toEqual({ ok: false, reason: "body_timeout" });
  });

  it("still times a read out after the reads before it have all ended", async () => {
    const first = request();
    const read = readNodeBody(first, 1024, 50);
    first.end("{}");
    expect((await read).ok).toBe(true);
    // Long enough for the limit's clock to find nothing to watch and stop.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const later = request();
    later.write("{");
    expect(await readNodeBody(later, 1024, 50)).toEqual({ ok: false, reason: "body_timeout" });
  });
});
