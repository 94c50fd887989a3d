import { createFetchHandler } from "merchant-webhooks/fetch";
import { requestClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

runConformance("fetch", async (options) => {
  const handler = createFetchHandler(options);
  return { send: requestClient(handler), close: () => handler.receiver.close() };
});
