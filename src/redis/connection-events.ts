import { Cluster, type Redis } from "ioredis";
import type { ConnectionLogger, StoreConnection, StoreConnectionState } from "../idempotency/store.js";

/**
 * Turn an ioredis client's events into a connection state and log lines with its address. ioredis
 * repeats `error` and `reconnecting` on every retry of an outage (several a second); they are logged
 * once, when the connection goes down, and again only when it comes back, with how long it was away.
 */
export function connectionEvents(client: Redis | Cluster, what: string): StoreConnection {
  const address = addressOf(client);
  let current: StoreConnectionState = { state: client.status === "ready" ? "up" : "connecting", since: Date.now() };
  const watchers = new Set<ConnectionLogger>();
  const settledWaiters: Array<(state: "up" | "down" | "closed") => void> = [];

  const log = (level: "info" | "warn", fields: object, message: string) => {
    for (const logger of watchers) logger[level]({ store: what, address, ...fields }, message);
  };
  const enter = (state: StoreConnectionState["state"], error?: string) => {
    const previous = current;
    current = { state, since: Date.now(), ...(error === undefined ? {} : { error }) };
    if (state !== "connecting") for (const resolve of settledWaiters.splice(0)) resolve(state);
    return previous;
  };

  client.on("connect", () => {
    if (current.state === "connecting") log("info", {}, "redis connected");
  });
  client.on("ready", () => {
    if (current.state === "up") return;
    const previous = enter("up");
    if (previous.state === "down") {
      const downMs = Date.now() - previous.since;
      log("info", { down_ms: downMs }, `redis ready again after ${Math.round(downMs / 100) / 10} s unreachable`);
    } else log("info", {}, "redis ready");
  });
  const down = (err?: unknown, node?: string) => {
    const message = err instanceof Error ? err.message : undefined;
    if (current.state === "down" || current.state === "closed") {
      if (message && !current.error) current.error = message;
      return;
    }
    enter("down", message);
    log("warn", { ...(node ? { node } : {}), ...(message ? { err: message } : {}) }, "redis unreachable; reconnecting");
  };
  client.on("error", (err: unknown) => down(err));
  client.on("close", () => down());
  client.on("reconnecting", () => down());
  if (client instanceof Cluster) {
    client.on("node error", (err: unknown, node: string) => down(err, node));
  }
  client.on("end", () => {
    if (current.state === "closed") return;
    enter("closed");
    log("info", {}, "redis connection ended");
  });

  return {
    address,
    state: () => ({ ...current }),
    watch(logger) {
      watchers.add(logger);
      return () => watchers.delete(logger);
    },
    settled() {
      if (current.state !== "connecting") return Promise.resolve(current.state);
      return new Promise((resolve) => settledWaiters.push(resolve));
    },
  };
}

/** host:port (or the socket path), or the cluster's start-up nodes; never the password. */
export function addressOf(client: Redis | Cluster): string {
  if (client instanceof Cluster) {
    // The nodes given at start-up (ioredis keeps them on the instance, untyped as public).
    type StartupNode = string | number | { host?: string; port?: number };
    const startup = (client as unknown as { startupNodes?: StartupNode[] }).startupNodes ?? [];
    const nodes = startup.map((node) =>
      typeof node === "string"
        ? hostOfUrl(node)
        : typeof node === "number"
          ? `127.0.0.1:${node}`
          : `${node.host ?? "127.0.0.1"}:${node.port ?? 6379}`,
    );
    return `cluster ${nodes.join(",")}`;
  }
  const options = client.options;
  if (options.path) return options.path;
  return `${options.host ?? "127.0.0.1"}:${options.port ?? 6379}`;
}

function hostOfUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 6379}`;
  } catch {
    return "(unparsed node)";
  }
}
