import { createConnection, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of a Redis that can hold back the server's answers: commands reach Redis and
 * apply at once, their replies arrive `delayMs` late (in order). What a client meets when an answer is
 * lost on the way (a slow network, a loaded machine), without touching the shared server.
 */
export interface DelayingProxy {
  readonly url: string;
  /** Hold back replies by this much from now on (0: pass them at once). */
  delayReplies(ms: number): void;
  close(): Promise<void>;
}

export async function delayingProxy(target: { host: string; port: number }): Promise<DelayingProxy> {
  let delayMs = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    // Replies keep their order: each waits for the one before it.
    let previous = Promise.resolve();
    upstream.on("data", (chunk) => {
      const wait = delayMs;
      previous = previous.then(
        () =>
          new Promise<void>((resolve) =>
            setTimeout(() => {
              if (!client.destroyed) client.write(chunk);
              resolve();
            }, wait),
          ),
      );
    });
    client.on("data", (chunk) => upstream.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    delayReplies: (ms) => void (delayMs = ms),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
