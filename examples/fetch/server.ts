import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import app, { webhook } from "./handler.js";

// Run with `npx tsx examples/fetch/server.ts`: Node's http server in front of the Web-standard handler,
// through a small Request/Response bridge (what Hono's node-server or a Workers runtime does for you).

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    // Streamed, not buffered: the handler enforces its body limit while reading.
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    duplex: "half",
  } as RequestInit);
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

const server = createServer((req, res) => {
  app.fetch(toRequest(req)).then(
    (response) => send(response, res),
    () => res.writeHead(500).end(),
  );
});

const port = Number(process.env.PORT ?? 3000);
server.listen(port, () => console.log(`receiving notifications on http://localhost:${port}/webhooks/subscriptions`));

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => server.close(() => void webhook.receiver.close().then(() => process.exit(0))));
}
