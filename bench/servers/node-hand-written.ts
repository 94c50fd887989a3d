import { createServer } from "node:http";
import { handWrittenRoute } from "./hand-written.js";
import { serve } from "./serve.js";

// The hand-written reference on Node's http: read the body, JSON.parse, then the same work as the handler.
const route = await handWrittenRoute();
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", async () => {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end('{"processed":false,"message":"invalid JSON"}');
      return;
    }
    const { status, answer } = await route(body);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(answer));
  });
});
serve(server);
