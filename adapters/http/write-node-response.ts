import type { ServerResponse } from "node:http";
import type { ReceiverResponse } from "../../src/answer/answer.js";

/**
 * Write the core's answer straight to Node's response: no framework serialization or ETag work on the
 * hot path, and identical bytes from every Node-based adapter.
 */
export function writeNodeResponse(res: ServerResponse, response: ReceiverResponse, closeConnection = false): void {
  const headers = closeConnection ? { ...response.headers, connection: "close" } : response.headers;
  res.writeHead(response.status, headers);
  res.end(response.body);
}
