import { createServer } from "node:http";
import { GUARDED_BODY_LIMIT, guardedHandWrittenRoute } from "./hand-written.js";
import { serve } from "./serve.js";

// "Hand-written, same guarantees" on Node's http: read the body within the limit (413 past it),
// JSON.parse, then the guarded route.
const route = await guardedHandWrittenRoute();
const answer = (res: import("node:http").ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > GUARDED_BODY_LIMIT) tooLarge = true;
    else chunks.push(chunk);
  });
  req.on("end", async () => {
    if (tooLarge) return answer(res, 413, { processed: false, message: "body too large" });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return answer(res, 400, { processed: false, message: "invalid JSON" });
    }
    const { status, answer: reply } = await route(body);
    answer(res, status, reply);
  });
});
serve(server);
