import type { IncomingMessage } from "node:http";
import { clockFor } from "./coarse-clock.js";

export type NodeBodyRead =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: "too_large" | "unreadable" | "consumed" | "body_timeout" };

/**
 * Read a Node request body into memory, refusing it as soon as it passes `limit` (by its
 * Content-Length, or while streaming when that is absent or false), so an oversized body never
 * occupies more than `limit` bytes, and giving up after `timeoutMs` (0: never; at most a tenth of it
 * later), so a body trickled a byte at a time cannot hold the connection. Settles on every path: end,
 * error, abort, time limit, or a stream that an earlier middleware already drained.
 */
export function readNodeBody(req: IncomingMessage, limit: number, timeoutMs = 0): Promise<NodeBodyRead> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) return Promise.resolve({ ok: false, reason: "too_large" });
  if (req.readableEnded || (req as { _body?: unknown })._body === true) {
    return Promise.resolve({ ok: false, reason: "consumed" });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const clock = timeoutMs > 0 ? clockFor(timeoutMs) : undefined;
    const expire = () => stop("body_timeout");
    const settle = (result: NodeBodyRead) => {
      clock?.unwatch(expire);
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop("too_large");
      else chunks.push(chunk);
    };
    // Stop buffering; the answer carries `connection: close`, so Node drops the rest with the connection.
    const stop = (reason: "too_large" | "body_timeout") => {
      req.pause();
      settle({ ok: false, reason });
    };
    const onEnd = () => settle({ ok: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    const onError = () => settle({ ok: false, reason: "unreadable" });
    const onClose = () => settle({ ok: false, reason: "unreadable" });
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
    clock?.watch(expire);
  });
}
