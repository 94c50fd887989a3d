import type { ReceiverResponse } from "../../src/answer/answer.js";

/** The core's answer as a Fetch API `Response`, byte for byte what the Node adapters write. */
export function toWebResponse(response: ReceiverResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}
