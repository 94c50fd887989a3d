import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  headers: IncomingMessage["headers"];
  body: string;
}

/** What the endpoint does with one request: answer (status and body) or never answer. */
export type Reply = { status: number; body: unknown } | "hang";

/**
 * A webhook endpoint that answers from a script, one reply per request in order (the last repeats),
 * and keeps every request it received.
 */
export async function scriptedEndpoint(script: readonly Reply[]) {
  const received: ReceivedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      const reply = script[Math.min(received.length - 1, script.length - 1)]!;
      if (reply === "hang") return;
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const PROCESSED: Reply = { status: 200, body: { processed: true, message: "processed" } };
