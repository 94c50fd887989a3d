/**
 * The most of an answer's body the simulator and replay read. A webhook answers `{ processed, message }`, a few
 * dozen bytes; an endpoint that streams gigabytes back must not take the simulator's memory with it.
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The body's text up to `MAX_ANSWER_BYTES`; the rest is not read (the connection is cancelled). */
export async function readAnswer(response: Response, limit = MAX_ANSWER_BYTES): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (size >= limit) await reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit));
}
