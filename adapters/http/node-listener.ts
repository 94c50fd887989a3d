// Node's HTTP glue for the Express, Next (Pages Router) and plain Node adapters: the listener, reading
// the request (or what a body parser left of it), and writing the answer.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ReceiverResponse } from "../../src/receiver/answer-and-log.js";
import type { Receiver } from "../../src/receiver/create-receiver.js";
import { readNodeBody } from "../../src/shared/read-node-body.js";

/**
 * A complete Node `(req, res)` listener around a receiver (plain `http`, Express, Next's Pages Router).
 * Its promise never rejects: a rejected listener can take the process down, and an unanswered request
 * leaves the sender hanging. A failure in here (a bug, never bad input) is logged and answered 500.
 */
export function nodeListener(
  receiver: Receiver,
): (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      const { response, closeConnection } = await handleNodeRequest(receiver, req);
      writeNodeResponse(res, response, closeConnection);
    } catch (err) {
      const response = receiver.internalError(err);
      if (!res.headersSent) writeNodeResponse(res, response, true);
      else res.destroy();
    }
  };
}

/** Has an earlier middleware left the bytes or a parse of them on `req.body`? */
function bodyLeftBy(
  req: IncomingMessage & { body?: unknown },
): { rawBody: Uint8Array } | { parsedBody: unknown } | undefined {
  const body = req.body;
  if (body instanceof Uint8Array) return { rawBody: body }; // express.raw()
  if (typeof body === "string") return { rawBody: Buffer.from(body, "utf8") }; // express.text()
  // A parsed object is only what is left when the stream is gone: Express 4's json() sets `{}` on
  // requests it skips, leaving the stream unread for us.
  const drained = req.readableEnded || (req as { _body?: unknown })._body === true;
  if (drained && body !== undefined && body !== null && typeof body === "object") return { parsedBody: body };
  return undefined;
}

/**
 * Feed a Node request to the core, reading the stream unless a body parser already did. Returns the
 * answer and whether the connection should close because the body was left unread.
 */
async function handleNodeRequest(
  receiver: Receiver,
  req: IncomingMessage & { body?: unknown },
): Promise<{ response: ReceiverResponse; closeConnection: boolean }> {
  const method = req.method ?? "GET";
  if (method !== "POST")
    return { response: await receiver.handle({ method, headers: req.headers }), closeConnection: false };
  const left = bodyLeftBy(req);
  if (left)
    return { response: await receiver.handle({ method, headers: req.headers, ...left }), closeConnection: false };
  const read = await readNodeBody(req, receiver.bodyLimit, receiver.bodyTimeoutMs);
  if (read.ok)
    return {
      response: await receiver.handle({ method, headers: req.headers, rawBody: read.bytes }),
      closeConnection: false,
    };
  const rejection = read.reason === "consumed" ? "body_consumed" : read.reason;
  // The rest of an unread body would keep the connection busy: close it with the answer.
  return {
    response: receiver.reject(rejection),
    closeConnection: read.reason === "too_large" || read.reason === "body_timeout",
  };
}

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
