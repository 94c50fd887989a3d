import { OUTCOMES } from "../../src/dispatch/outcomes.js";
import { type FailureStatus, type ReceiverResponse, respond } from "../../src/receiver/answer-and-log.js";

/** An error from body-parser or raw-body (`express.json()`, `express.text()`, ...), as they describe it. */
interface BodyParserError {
  type: string;
  status: number;
  /** The parser's size limit, on `entity.too.large`. */
  limit?: number;
}

// The request-side errors body-parser and raw-body raise (stream misuse, a 500, is left to the app).
const REQUEST_ERRORS = new Set([
  "entity.parse.failed",
  "entity.too.large",
  "entity.verify.failed",
  "charset.unsupported",
  "encoding.unsupported",
  "request.aborted",
  "request.size.invalid",
  "parameters.too.many",
]);

export function isBodyParserError(err: unknown): err is BodyParserError {
  const candidate = err as Partial<BodyParserError> | null;
  return (
    typeof candidate?.type === "string" && REQUEST_ERRORS.has(candidate.type) && typeof candidate.status === "number"
  );
}

/**
 * The answer the receiver would have given for what a body parser in front of it refused, so the
 * sender gets `{ processed: false, message }` JSON rather than the framework's HTML error page.
 */
export function bodyParserAnswer(err: BodyParserError, failureStatus: FailureStatus): ReceiverResponse {
  const fail = (status: number, message: string) => respond(status, { processed: false, message }, failureStatus);
  switch (err.type) {
    case "entity.parse.failed":
      return fail(400, "body is not valid JSON");
    case "entity.too.large":
      return fail(
        413,
        err.limit === undefined ? OUTCOMES.too_large.message : `body exceeds the limit of ${err.limit} bytes`,
      );
    case "charset.unsupported":
    case "encoding.unsupported":
      return fail(415, OUTCOMES.unsupported_media_type.message);
    default:
      return fail(err.status >= 400 && err.status < 500 ? err.status : 400, "request body could not be read");
  }
}
