import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { coded } from "../shared/errors.js";
import { nearest } from "../shared/option-keys.js";
import { readNodeBody } from "../shared/read-node-body.js";
import { SimulatorApiError } from "./api-error.js";

/** An endpoint: the parsed JSON body in, the JSON answer out; a SimulatorApiError becomes its status. */
export type Route = (body: unknown) => unknown;

const BODY_LIMIT = 1024 * 1024;

/** A fault to answer instead of the route, for testing a client's retries. */
interface InjectedFault {
  status: number;
  remaining: number;
}

/** The platform's API over node:http: POST with a JSON body to each route, JSON answers. */
export function createApiServer(routes: ReadonlyMap<string, Route>) {
  const faults = new Map<string, InjectedFault>();
  let requests = 0;
  let server: Server | undefined;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = `req-${String(++requests).padStart(6, "0")}`;
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "x-request-id": requestId });
      res.end(JSON.stringify(body));
    };
    const refuse = (status: number, name: string, message: string) =>
      answer(status, { status_detail: { name, message, details: [] } });

    const path = new URL(req.url ?? "/", "http://simulator").pathname;
    const route = routes.get(path);
    if (!route) return refuse(404, "NOT_FOUND", `no endpoint ${path}`);
    if (req.method !== "POST") return refuse(405, "METHOD_NOT_ALLOWED", "every endpoint takes POST");
    const fault = faults.get(path);
    if (fault && fault.remaining > 0) {
      fault.remaining--;
      // Read the body first: the request reached the server, which is the case a client must not retry blindly.
      await readNodeBody(req, BODY_LIMIT);
      return refuse(fault.status, "INJECTED_FAULT", "a fault injected by the test");
    }
    const read = await readNodeBody(req, BODY_LIMIT);
    if (!read.ok)
      return refuse(read.reason === "too_large" ? 413 : 400, "INVALID_REQUEST", "the body could not be read");
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(read.bytes).toString("utf8"));
    } catch {
      return refuse(400, "INVALID_REQUEST", "the body is not JSON");
    }
    try {
      answer(200, route(body));
    } catch (err) {
      if (err instanceof SimulatorApiError) return refuse(err.status, err.statusName, err.message);
      refuse(500, "INTERNAL", "the simulator failed");
    }
  }

  return {
    /** Requests served so far (every path, every answer). */
    get requests() {
      return requests;
    },
    /** Answer the next `times` requests to `path` with `status` before the route sees them. */
    failNext(path: string, status: number, times = 1): void {
      // A misspelt path would inject nothing, and the test would pass for the wrong reason.
      if (!routes.has(path)) {
        const near = nearest(path, [...routes.keys()]);
        throw coded(
          new RangeError(
            `failNext: no endpoint ${JSON.stringify(path)}${near ? `; did you mean "${near}"?` : ""} Endpoints: ${[...routes.keys()].join(", ")}`,
          ),
          "MW_INVALID_ARGUMENT",
        );
      }
      if (!(Number.isInteger(status) && status >= 100 && status <= 599))
        throw coded(
          new RangeError(`failNext: status must be an HTTP status (100-599), got ${status}`),
          "MW_INVALID_ARGUMENT",
        );
      if (!(Number.isInteger(times) && times >= 0))
        throw coded(
          new RangeError(`failNext: times must be a whole number of 0 or more, got ${times}`),
          "MW_INVALID_ARGUMENT",
        );
      faults.set(path, { status, remaining: times });
    },
    listen(port: number, host: string): Promise<string> {
      server = createServer((req, res) => void serve(req, res));
      return new Promise((resolve, reject) => {
        server!.once("error", reject);
        server!.listen(port, host, () => {
          const { port: bound } = server!.address() as AddressInfo;
          resolve(`http://${host.includes(":") ? `[${host}]` : host}:${bound}`);
        });
      });
    },
    close(): Promise<void> {
      if (!server) return Promise.resolve();
      const closing = server;
      return new Promise((resolve) => {
        closing.close(() => resolve());
        closing.closeAllConnections();
      });
    },
  };
}
