// What worker.ts is configured with and rows.ts signs and measures against; imports nothing, so it
// bundles into the worker.
export const RUNTIME_HMAC = {
  secret: "a runtime test secret of 32 bytes",
  header: "x-platform-signature",
  prefix: "sha256=",
};
export const RUNTIME_STANDARD_SECRET = "whsec_cnVudGltZSB0ZXN0cyBzdGFuZGFyZCBzZWNyZXQsIDMyIGI=";
export const RUNTIME_LIMITS = { bodyLimit: 2_500, bodyTimeoutMs: 500, handlerTimeoutMs: 300 };
