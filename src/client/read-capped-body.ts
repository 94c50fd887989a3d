import { MerchantWebhooksError } from "../shared/errors.js";
/** The answer was larger than `maxResponseBytes`: what was read is dropped and the call is not retried. */
export class ResponseTooLargeError extends MerchantWebhooksError {
  override readonly name = "ResponseTooLargeError";
  constructor(readonly limit: number) {
    super("MW_CLIENT_RESPONSE_TOO_LARGE", `the answer exceeds maxResponseBytes (${limit} bytes)`);
  }
}

/**
 * The response body as text, read chunk by chunk and given up (the stream cancelled) as soon as it
 * passes `limit` bytes, so a server streaming gigabytes costs at most `limit` bytes of memory. A
 * declared `content-length` over the limit is refused before anything is read. The chunks are joined
 * once and decoded once: no copy per chunk.
 */
export async function readCappedBody(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => {});
    throw new ResponseTooLargeError(limit);
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new ResponseTooLargeError(limit);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
}
