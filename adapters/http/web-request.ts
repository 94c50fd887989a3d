// The Fetch API glue for the fetch and Next (App Router) adapters: reading a `Request` body within the
// receiver's limits, and the answer as a `Response`.
import type { ReceiverResponse } from "../../src/receiver/answer-and-log.js";
import type { Receiver, ReceiverRequest } from "../../src/receiver/create-receiver.js";

/** Feed a Fetch API `Request` to the core: the body is read once, within the receiver's limits. */
async function handleWebRequest(
  receiver: Receiver,
  request: Request,
  onAccepted: ReceiverRequest["onAccepted"],
): Promise<ReceiverResponse> {
  const method = request.method;
  if (method !== "POST") return receiver.handle({ method, headers: request.headers });
  const read = await readWebBody(request, receiver.bodyLimit, receiver.bodyTimeoutMs);
  if (read.ok) return receiver.handle({ method, headers: request.headers, rawBody: read.bytes, onAccepted });
  return receiver.reject(read.reason === "consumed" ? "body_consumed" : read.reason);
}

/**
 * Answer a Fetch API `Request` with a receiver (fetch runtimes, Next's App Router, Hono). It never
 * rejects: a failure in here (a bug, never bad input) is logged and answered 500 like every other
 * adapter does. `onAccepted` is told the notification once intake accepts it.
 */
export async function answerWebRequest(
  receiver: Receiver,
  request: Request,
  onAccepted?: ReceiverRequest["onAccepted"],
): Promise<Response> {
  try {
    return toWebResponse(await handleWebRequest(receiver, request, onAccepted));
  } catch (err) {
    return toWebResponse(receiver.internalError(err));
  }
}

/** A complete Fetch API handler around a receiver: `answerWebRequest` for every request. */
export function webHandler(receiver: Receiver): (request: Request) => Promise<Response> {
  return (request) => answerWebRequest(receiver, request);
}

/** The core's answer as a Fetch API `Response`, byte for byte what the Node adapters write. */
export function toWebResponse(response: ReceiverResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}

type WebBodyRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too_large" | "unreadable" | "consumed" | "body_timeout" };

/**
 * Read a Fetch API `Request` body, refusing it as soon as it passes `limit`: by its Content-Length
 * when declared, otherwise while streaming, so an oversized body never occupies more than `limit`
 * bytes (an unbounded `arrayBuffer()` would buffer all of it first), and giving up after `timeoutMs`
 * (0: never) so a body trickled a byte at a time cannot hold the request. Settles on every path.
 */
async function readWebBody(request: Request, limit: number, timeoutMs = 0): Promise<WebBodyRead> {
  if (request.bodyUsed) return { ok: false, reason: "consumed" };
  const declared = Number(request.headers.get("content-length"));
  if (declared > limit) {
    discard(request.body);
    return { ok: false, reason: "too_large" };
  }
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };

  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = request.body.getReader();
  } catch {
    return { ok: false, reason: "consumed" }; // locked by someone else's reader
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timedOut = false;
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          reader.cancel().catch(() => {}); // ends the pending read
        }, timeoutMs)
      : undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (timedOut) return { ok: false, reason: "body_timeout" };
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        reader.cancel().catch(() => {});
        return { ok: false, reason: "too_large" };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: timedOut ? "body_timeout" : "unreadable" };
  } finally {
    clearTimeout(timer);
  }
  return { ok: true, bytes: concat(chunks, size) };
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Tell the sender we will not read the rest; a runtime may otherwise keep buffering it. */
function discard(body: ReadableStream<Uint8Array> | null): void {
  if (body && !body.locked) body.cancel().catch(() => {});
}
