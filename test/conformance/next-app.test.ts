import { subscriptionWebhook } from "merchant-webhooks/next";
import { requestClient } from "./clients.js";
import { runConformance } from "./conformance-suite.js";

// What Next's App Router does with a route module: call the export named after the request method.
runConformance("Next.js App Router", async (options) => {
  const route = subscriptionWebhook(options);
  const methods: Record<string, (request: Request) => Promise<Response>> = route as never;
  return {
    send: requestClient((request) => methods[request.method]!(request)),
    close: () => route.receiver.close(),
  };
});
