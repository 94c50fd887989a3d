import { Cluster, type Redis } from "ioredis";
import { connectionTracker } from "../idempotency/connection-tracker.js";
import type { StoreConnection } from "../idempotency/store.js";

/**
 * Turn an ioredis client's events into a connection state and log lines with its address. ioredis
 * repeats `error` and `reconnecting` on every retry of an outage (several a second); they are logged
 * once, when the connection goes down, and again only when it comes back, with how long it was away.
 */
export function connectionEvents(client: Redis | Cluster, what: string): StoreConnection {
  const tracker = connectionTracker(what, addressOf(client), client.status === "ready" ? "up" : "connecting");

  client.on("connect", () => {
    if (tracker.current().state === "connecting") tracker.log("info", {}, "redis connected");
  });
  client.on("ready", () => tracker.up("redis"));
  const down = (err?: unknown, node?: string) => {
    const message = err instanceof Error ? err.message : undefined;
    const current = tracker.current();
    if (current.state === "down" || current.state === "closed") {
      if (message && !current.error) current.error = message;
      return;
    }
    tracker.enter("down", message);
    tracker.log(
      "warn",
      { ...(node ? { node } : {}), ...(message ? { err: message } : {}) },
      "redis unreachable; reconnecting",
    );
  };
  client.on("error", (err: unknown) => down(err));
  client.on("close", () => down());
  client.on("reconnecting", () => down());
  if (client instanceof Cluster) {
    client.on("node error", (err: unknown, node: string) => down(err, node));
  }
  client.on("end", () => {
    if (tracker.current().state === "closed") return;
    tracker.enter("closed");
    tracker.log("info", {}, "redis connection ended");
  });

  return tracker.connection();
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
