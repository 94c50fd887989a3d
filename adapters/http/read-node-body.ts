import type { IncomingMessage } from "node:http";

export type NodeBodyRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too_large" | "unreadable" | "consumed" };

/**
 * Read a Node request body into memory, refusing it as soon as it passes `limit` (by its
 * Content-Length, or while streaming when that is absent or false), so an oversized body never
 * occupies more than `limit` bytes. Settles on every path: end, error, abort, or a stream that an
 * earlier middleware already drained.
 */
export function readNodeBody(req: IncomingMessage, limit: number): Promise<NodeBodyRead> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) return Promise.resolve({ ok: false, reason: "too_large" });
  if (req.readableEnded || (req as { _body?: unknown })._body === true) {
    return Promise.resolve({ ok: false, reason: "consumed" });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (result: NodeBodyRead) => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop buffering; Node discards the rest and closes the connection after the 413.
        req.pause();
        settle({ ok: false, reason: "too_large" });
      } else chunks.push(chunk);
    };
    const onEnd = () => settle({ ok: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    const onError = () => settle({ ok: false, reason: "unreadable" });
    const onClose = () => settle({ ok: false, reason: "unreadable" });
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}
