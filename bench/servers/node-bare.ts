import { createServer } from "node:http";
import { serve } from "./serve.js";

// The baseline on Node's http: read the body, JSON.parse, answer.
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let processed = false;
    try {
      processed = typeof JSON.parse(Buffer.concat(chunks).toString("utf8"))?.id === "string";
    } catch {}
    res.writeHead(processed ? 200 : 400, { "content-type": "application/json" });
    res.end(JSON.stringify({ processed, message: "processed" }));
  });
});
serve(server);
