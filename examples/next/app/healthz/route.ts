import { webhook } from "../webhook.js";

// GET /healthz for the load balancer: 503 while the store (or queue) is unreachable.
export async function GET(): Promise<Response> {
  const health = await webhook.receiver.health();
  return Response.json(health, { status: health.ok ? 200 : 503 });
}
