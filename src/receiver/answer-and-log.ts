import type { Logger } from "pino";
import { respond, responsesByOutcome, type FailureStatus, type ReceiverResponse } from "../answer/answer.js";
import { OUTCOMES } from "../answer/outcomes.js";
import type { ReceiveObservation } from "../telemetry/observe-receive.js";
import type { Verdict } from "./verdict.js";

/**
 * The last step: turn a verdict into the answer, and write the one log line per notification. The
 * request's observation, if any, ends here too: it reads the line, and adds the trace ids to it.
 * `inFlight` is the receiver's count of notifications in flight, shown as `in_flight` on each line.
 */
export function answerAndLog(
  logger: Logger,
  failureStatus: FailureStatus,
  inFlight: () => number = () => 0,
): (verdict: Verdict, started: number, observation?: ReceiveObservation) => ReceiverResponse {
  const fixedResponses = responsesByOutcome(failureStatus);
  return ({ outcome, fields, message, headers }, started, observation) => {
    const row = OUTCOMES[outcome];
    const response =
      message !== undefined || headers
        ? respond(row.status, { processed: row.processed, message: message ?? row.message }, failureStatus, headers)
        : fixedResponses[outcome];
    const line = {
      ...fields,
      outcome,
      status: response.status,
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
      in_flight: inFlight(),
    };
    observation?.end(line);
    if (row.status >= 500) logger.error(line, "notification not processed");
    else if (row.status >= 400) logger.warn(line, "notification rejected");
    else logger.info(line, "notification handled");
    return response;
  };
}
