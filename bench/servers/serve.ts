import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";

/** Listen on an ephemeral port and tell the parent which, on stdout. */
export function serve(app: { listen: (port: number, cb: () => void) => import("node:http").Server }): void {
  const server = app.listen(0, () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
}

export async function serveFastify(app: FastifyInstance): Promise<void> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  console.log(JSON.stringify({ port: (app.server.address() as AddressInfo).port }));
}
