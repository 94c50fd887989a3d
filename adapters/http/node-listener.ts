import type { IncomingMessage, ServerResponse } from "node:http";
import type { Receiver } from "../../src/receiver/create-receiver.js";
import { handleNodeRequest } from "./node-request.js";
import { writeNodeResponse } from "./write-node-response.js";

/**
 * A complete Node `(req, res)` listener around a receiver (plain `http`, Express, Next's Pages Router).
 * Its promise never rejects: a rejected listener can take the process down, and an unanswered request
 * leaves the sender hanging. A failure in here (a bug, never bad input) is logged and answered 500.
 */
export function nodeListener(
  receiver: Receiver,
): (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      const { response, closeConnection } = await handleNodeRequest(receiver, req);
      writeNodeResponse(res, response, closeConnection);
    } catch (err) {
      const response = receiver.internalError(err);
      if (!res.headersSent) writeNodeResponse(res, response, true);
      else res.destroy();
    }
  };
}
