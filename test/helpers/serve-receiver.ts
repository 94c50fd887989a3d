import { createServer } from "node:http";
import type { Receiver } from "../../src/receiver/create-receiver.js";
import { handleNodeRequest } from "../../adapters/http/node-request.js";
import { writeNodeResponse } from "../../adapters/http/write-node-response.js";

/** Serve `receiver` over node:http on an ephemeral port and print "listening <port>" (what `spawnReceiver` waits for). */
export function serveReceiver(receiver: Receiver) {
  const server = createServer(async (req, res) => {
    const { response, closeConnection } = await handleNodeRequest(receiver, req);
    writeNodeResponse(res, response, closeConnection);
  });
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`listening ${port}\n`);
  });
  return server;
}
