import type { ServerResponse } from "node:http";
import type { ReceiverResponse } from "../../src/answer/answer.js";

/**
 * The answer's headers with its `content-length`. With a length Node writes the head and the body as
 * one string in one system call; without one it falls back to chunked encoding, which costs a `writev`
 * of four buffers and a terminating chunk per answer. The answers shared between requests are frozen,
 * so theirs are worked out once.
 */
const withLength = new WeakMap<ReceiverResponse, Record<string, string>>();

function headersOf(response: ReceiverResponse): Record<string, string> {
  const known = withLength.get(response);
  if (known) return known;
  const headers = { ...response.headers, "content-length": String(Buffer.byteLength(response.body)) };
  if (Object.isFrozen(response)) withLength.set(response, headers);
  return headers;
}

/**
 * Write the core's answer straight to Node's response: no framework serialization or ETag work on the
 * hot path, and identical bytes from every Node-based adapter.
 */
export function writeNodeResponse(res: ServerResponse, response: ReceiverResponse, closeConnection = false): void {
  const headers = headersOf(response);
  res.writeHead(response.status, closeConnection ? { ...headers, connection: "close" } : headers);
  res.end(response.body);
}
