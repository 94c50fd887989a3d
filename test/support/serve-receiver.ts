import { createServer } from "node:http";
import type { Receiver } from "merchant-webhooks";
import { nodeListener } from "../../adapters/http/node-listener.js";

/** Serve `receiver` over node:http on an ephemeral port and print "listening <port>" (what `spawnReceiver` waits for). */
export function serveReceiver(receiver: Receiver) {
  const server = createServer(nodeListener(receiver));
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`listening ${port}\n`);
  });
  return server;
}
