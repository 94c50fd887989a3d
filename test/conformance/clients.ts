import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** What the suite sends: the exact bytes, optionally as a chunked stream with no Content-Length. */
export interface SentRequest {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  streamed?: boolean;
  /** With `streamed`: after the body, keep the stream open as a sender that never finishes would. */
  neverEnds?: boolean;
}

/** What the sender sees: status, lower-case headers, the body parsed as JSON (the raw text when it is not). */
export interface Received {
  status: number;
  headers: Record<string, string>;
  body: any;
}

export type Send = (request: SentRequest) => Promise<Received>;

/** Split into chunks so a streaming reader has to count across several of them. */
function chunked(bytes: Uint8Array, neverEnds = false): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset < bytes.length) {
        controller.enqueue(bytes.slice(offset, (offset += 800)));
        return;
      }
      if (!neverEnds) return controller.close();
      return new Promise<void>(() => {}); // stalls until the reader gives up and cancels
    },
  });
}

function init(request: SentRequest): RequestInit {
  const body =
    request.body === undefined ? undefined : request.streamed ? chunked(request.body, request.neverEnds) : request.body;
  // `duplex` is required for a stream body (fetch sends it chunked); the DOM lib does not declare it yet.
  return {
    method: request.method,
    headers: request.headers,
    body: body as BodyInit | undefined,
    duplex: "half",
  } as RequestInit;
}

async function received(response: Response): Promise<Received> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // left as text: the assertions will show what came back
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body };
}

/** Calls a Fetch API handler directly with real `Request` objects. */
export function requestClient(handler: (request: Request) => Promise<Response>): Send {
  return async (request) => received(await handler(new Request("http://merchant.test/hook", init(request))));
}

/** Sends over real HTTP with the platform's likely client, fetch. */
export function httpClient(url: string): Send {
  return async (request) => received(await fetch(url, init(request)));
}

/** Listen on an ephemeral port; resolves to the URL of `path` and a closer that drops open connections. */
export async function listen(server: Server, path = "/hook"): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The Lambda event shapes a Lambda adapter is invoked with. */
export type LambdaEventFormat = "http-api-v2" | "rest-api-v1" | "function-url";

/**
 * Invokes a Lambda handler as AWS would: the request becomes an API Gateway HTTP API, REST API or
 * Function URL event. HTTP API sends text bodies as text and others base64, as API Gateway does for a
 * body that is not valid UTF-8; REST API and Function URLs here always send base64, so both paths run.
 * Lambda has the whole body before it is invoked, so `streamed` makes no difference.
 */
export function lambdaClient(
  handler: (event: any) => Promise<{ statusCode: number; headers?: Record<string, string>; body: string }>,
  format: LambdaEventFormat,
): Send {
  const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
  return async (request) => {
    let text: string | undefined;
    if (format === "http-api-v2" && request.body) {
      try {
        text = strictUtf8.decode(request.body);
      } catch {
        // not UTF-8: sent base64
      }
    }
    const base64 = request.body !== undefined && text === undefined;
    const body = request.body === undefined ? undefined : (text ?? Buffer.from(request.body).toString("base64"));
    const lower = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]),
    );
    const common = { body: body ?? null, isBase64Encoded: base64 };
    const event =
      format === "rest-api-v1"
        ? {
            resource: "/hook",
            path: "/hook",
            httpMethod: request.method,
            headers: request.headers,
            multiValueHeaders: Object.fromEntries(
              Object.entries(request.headers).map(([name, value]) => [name, [value]]),
            ),
            requestContext: { httpMethod: request.method, path: "/hook" },
            ...common,
          }
        : {
            version: "2.0",
            routeKey: format === "function-url" ? "$default" : "POST /hook",
            rawPath: "/hook",
            rawQueryString: "",
            headers: lower,
            requestContext: {
              http: { method: request.method, path: "/hook", protocol: "HTTP/1.1", sourceIp: "192.0.2.1" },
            },
            ...common,
          };
    const result = await handler(event);
    let parsed: unknown = result.body;
    try {
      parsed = JSON.parse(result.body);
    } catch {
      // left as text
    }
    const headers = Object.fromEntries(
      Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
    );
    return { status: result.statusCode, headers, body: parsed };
  };
}
