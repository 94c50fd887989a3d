import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's pgbouncer (`apt-get install pgbouncer`; .ci/run installs it). */
export const PGBOUNCER = "/usr/sbin/pgbouncer";

export interface PrivateBouncer {
  /** A connection string to database `test` through the bouncer. */
  url: string;
  /** The bouncer's server connections to PostgreSQL, at most. */
  serverConnections: number;
  stop(): Promise<void>;
}

/**
 * A private PgBouncer in transaction mode in front of the shared PostgreSQL (127.0.0.1:5432, db `test`):
 * its own port, configuration and auth file in a temporary directory, never the system service. With a
 * pool smaller than the clients' pools, consecutive transactions of one client run on different server
 * connections, as in a deployment behind it.
 */
export async function startPgbouncer({
  poolSize = 2,
  serverLifetimeSeconds = 3600,
}: {
  poolSize?: number;
  /** How long a server connection lives (it is closed once free after that), as PgBouncer's `server_lifetime`. */
  serverLifetimeSeconds?: number;
} = {}): Promise<PrivateBouncer> {
  if (!existsSync(PGBOUNCER))
    throw new Error(`${PGBOUNCER} is missing: these tests need Debian's pgbouncer (apt-get install -y pgbouncer)`);
  const dir = await mkdtemp(join(tmpdir(), "mw-pgbouncer-"));
  const port = await freePort();
  const runAs = process.getuid?.() === 0 ? "user = postgres\n" : "";
  await writeFile(join(dir, "users.txt"), '"postgres" ""\n');
  await writeFile(
    join(dir, "pgbouncer.ini"),
    `[databases]
test = host=127.0.0.1 port=5432 dbname=test user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, "users.txt")}
pool_mode = transaction
default_pool_size = ${poolSize}
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 200
ignore_startup_parameters = extra_float_digits,options
server_lifetime = ${serverLifetimeSeconds}
log_connections = 0
log_disconnections = 0
${runAs}`,
  );
  // Dropped to the postgres user when started as root: it must read its own files.
  await chmod(dir, 0o755);
  const child = spawn(PGBOUNCER, [join(dir, "pgbouncer.ini")], { stdio: ["ignore", "ignore", "pipe"] });
  // Never outlives the test process, even one that ends without stopping it.
  const orphaned = () => child.kill("SIGKILL");
  process.once("exit", orphaned);
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4_000);
  });
  try {
    await listening(child, port, () => log);
  } catch (err) {
    child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    serverConnections: poolSize,
    async stop() {
      process.off("exit", orphaned);
      await stopped(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listening(child: ChildProcess, port: number, log: () => string): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${log()}`);
    if (await connects(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pgbouncer did not listen on ${port} within 10 s: ${log()}`);
}

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.connect(port, "127.0.0.1");
  });

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    // SIGTERM: PgBouncer's immediate shutdown; the tests end their pools first.
    child.kill("SIGTERM");
  });
}
