import type { ReceiverResponse } from "../../src/receiver/answer-and-log.js";
import type { Receiver } from "../../src/receiver/create-receiver.js";
import { readWebBody } from "./read-web-body.js";

/** Feed a Fetch API `Request` to the core: the body is read once, within the receiver's limits. */
async function handleWebRequest(receiver: Receiver, request: Request): Promise<ReceiverResponse> {
  const method = request.method;
  if (method !== "POST") return receiver.handle({ method, headers: request.headers });
  const read = await readWebBody(request, receiver.bodyLimit, receiver.bodyTimeoutMs);
  if (read.ok) return receiver.handle({ method, headers: request.headers, rawBody: read.bytes });
  return receiver.reject(read.reason === "consumed" ? "body_consumed" : read.reason);
}

/**
 * A complete Fetch API handler around a receiver (fetch runtimes, Next's App Router). It never rejects:
 * a failure in here (a bug, never bad input) is logged and answered 500 like every other adapter does.
 */
export function webHandler(receiver: Receiver): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return toWebResponse(await handleWebRequest(receiver, request));
    } catch (err) {
      return toWebResponse(receiver.internalError(err));
    }
  };
}

/** The core's answer as a Fetch API `Response`, byte for byte what the Node adapters write. */
export function toWebResponse(response: ReceiverResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}
