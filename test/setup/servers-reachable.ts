import { connect } from "node:net";

/**
 * Global setup of the full suite: before any test starts, check that the servers it needs answer, and
 * fail in one line that says which is missing and how to start it, instead of 30-second time-outs
 * and a flood of connection errors. `npm run test:unit` runs the tests that need no server.
 */
const SERVERS = [
  {
    name: "Redis",
    url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    variable: "REDIS_URL",
    defaultPort: 6379,
    start: "redis-server --daemonize yes (or: docker run -d -p 6379:6379 redis:7)",
  },
  {
    name: "PostgreSQL",
    url: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    variable: "DATABASE_URL",
    defaultPort: 5432,
    start:
      "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start (or: docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust -e POSTGRES_DB=test postgres:15)",
  },
];

function reachable(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export default async function checkServers(): Promise<void> {
  const missing: string[] = [];
  for (const server of SERVERS) {
    const url = new URL(server.url);
    const host = url.hostname || "127.0.0.1";
    const port = Number(url.port || server.defaultPort);
    if (!(await reachable(host, port))) {
      missing.push(
        `${server.name} is not reachable at ${host}:${port} (${server.variable}); start it with: ${server.start}`,
      );
    }
  }
  if (missing.length > 0) {
    throw new Error(`${missing.join("\n")}\nOr run \`npm run test:unit\` for the tests that need no server.`);
  }
}
