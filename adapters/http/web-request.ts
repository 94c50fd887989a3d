import type { Receiver } from "../../src/receiver/create-receiver.js";
import type { ReceiverResponse } from "../../src/answer/answer.js";
import { readWebBody } from "./read-web-body.js";

/** Feed a Fetch API `Request` to the core: the body is read once, within the receiver's limit. */
export async function handleWebRequest(receiver: Receiver, request: Request): Promise<ReceiverResponse> {
  const method = request.method;
  if (method !== "POST") return receiver.handle({ method, headers: request.headers });
  const read = await readWebBody(request, receiver.bodyLimit);
  if (read.ok) return receiver.handle({ method, headers: request.headers, rawBody: read.bytes });
  return receiver.reject(read.reason === "consumed" ? "body_consumed" : read.reason);
}
