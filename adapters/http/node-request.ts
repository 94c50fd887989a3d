import type { IncomingMessage } from "node:http";
import type { ReceiverResponse } from "../../src/answer/answer.js";
import type { Receiver } from "../../src/receiver/create-receiver.js";
import { readNodeBody } from "../../src/shared/read-node-body.js";

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
export async function handleNodeRequest(
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
