import type { IncomingMessage, ServerResponse } from "node:http";
import type { Receiver } from "../../src/receiver/create-receiver.js";
import type { ReceiverOptions } from "../../src/receiver/options.js";
import { respond } from "../../src/answer/answer.js";
import { handleNodeRequest } from "./node-request.js";
import { writeNodeResponse } from "./write-node-response.js";

const INTERNAL_ERROR = { processed: false, message: "internal error" };

/**
 * A complete Node `(req, res)` listener around a receiver, for hosts with no error middleware of
 * their own (plain `http`, Next's Pages Router). Its promise never rejects: a rejected listener can
 * take the process down, and an unanswered request leaves the sender hanging.
 */
export function nodeListener(
  receiver: Receiver,
  options: Pick<ReceiverOptions, "logger" | "failureStatus">,
): (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      const { response, closeConnection } = await handleNodeRequest(receiver, req);
      writeNodeResponse(res, response, closeConnection);
    } catch (err) {
      // Only a bug lands here; every kind of bad input has its own answer.
      options.logger?.error({ err }, "webhook request failed");
      if (!res.headersSent) writeNodeResponse(res, respond(500, INTERNAL_ERROR, options.failureStatus ?? "semantic"), true);
      else res.destroy();
    }
  };
}
