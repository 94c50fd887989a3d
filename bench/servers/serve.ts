import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import type { FastifyInstance } from "fastify";

/**
 * Listen on an ephemeral port and tell the parent which, on stdout. After that, each line the parent
 * writes on stdin is answered with this process's CPU time so far (user and system apart, µs, every
 * thread: the log writes and GC helpers count), its heap and the requests received so far, so the parent can take the
 * server's CPU per request over exactly the measured window.
 */
export function serve(app: { listen: (port: number, cb: () => void) => Server }): void {
  const server = app.listen(0, () => announce(server));
}

export async function serveFastify(app: FastifyInstance): Promise<void> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  announce(app.server);
}

function announce(server: Server): void {
  // Exit rather than die on the parent's SIGTERM, so a profiler (`BENCH_NODE_FLAGS=--cpu-prof`) writes its file.
  process.once("SIGTERM", () => process.exit(0));
  let requests = 0;
  server.on("request", () => requests++);
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
  createInterface({ input: process.stdin }).on("line", () => {
    const { user, system } = process.cpuUsage();
    console.log(JSON.stringify({ user_us: user, system_us: system, requests }));
  });
}
