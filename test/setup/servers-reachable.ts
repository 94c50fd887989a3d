import { connect } from "node:net";
import pg from "pg";

/**
 * Global setup of the full suite: before any test starts, check that the servers it needs answer, and
 * fail in one line that says which is missing and how to start it, instead of 30-second time-outs
 * and a flood of connection errors. `npm run test:unit` runs the tests that need no server.
 */
const serversFrom = (env: NodeJS.ProcessEnv) => [
  {
    name: "Redis",
    url: env.REDIS_URL ?? "redis://127.0.0.1:6379",
    variable: "REDIS_URL",
    defaultPort: 6379,
    start: "redis-server --daemonize yes (or: docker run -d -p 6379:6379 redis:7)",
  },
  {
    name: "PostgreSQL",
    url: env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
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

/**
 * A PostgreSQL server that answers can still lack the database DATABASE_URL names: every test would then
 * fail on its own with "database … does not exist". Connecting once turns that into one line.
 */
async function databaseProblem(databaseUrl: string, where: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    const url = new URL(databaseUrl);
    const database = decodeURIComponent(url.pathname.slice(1)) || url.username || "postgres";
    if (code === "3D000") {
      const user = url.username ? ` -U ${decodeURIComponent(url.username)}` : "";
      return `PostgreSQL at ${where} has no database "${database}" (DATABASE_URL); create it with: createdb -h ${url.hostname} -p ${url.port || 5432}${user} ${database}`;
    }
    return `PostgreSQL at ${where} refused database "${database}" (DATABASE_URL): ${message ?? String(error)}`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The lines that say which server or database is missing; none when every one answers. */
export async function missingServers(env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const missing: string[] = [];
  for (const server of serversFrom(env)) {
    const url = new URL(server.url);
    const host = url.hostname || "127.0.0.1";
    const port = Number(url.port || server.defaultPort);
    if (!(await reachable(host, port))) {
      missing.push(
        `${server.name} is not reachable at ${host}:${port} (${server.variable}); start it with: ${server.start}`,
      );
    } else if (server.variable === "DATABASE_URL") {
      const problem = await databaseProblem(server.url, `${host}:${port}`);
      if (problem) missing.push(problem);
    }
  }
  return missing;
}

export default async function checkServers(): Promise<void> {
  const missing = await missingServers();
  if (missing.length > 0) {
    throw new Error(`${missing.join("\n")}\nOr run \`npm run test:unit\` for the tests that need no server.`);
  }
}
