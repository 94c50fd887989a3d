import { standardWebhooksVerifier } from "merchant-webhooks";
import { type RunningWebhook, startWebhook } from "../cli/run-cli.js";

/**
 * An Express receiver verifying Standard Webhooks with `secret`, whose handlers note each call as
 * "<handler> <subscription id> <notification id>", in the order they ran.
 */
export async function recordingWebhook(secret: string): Promise<{ webhook: RunningWebhook; calls: string[] }> {
  const calls: string[] = [];
  const record = (name: string) => async (notification: { id: string; resource: { id?: string | undefined } }) =>
    void calls.push(`${name} ${notification.resource.id} ${notification.id}`);
  const webhook = await startWebhook({
    verify: standardWebhooksVerifier(secret),
    onCreated: record("created"),
    onRenew: record("renew"),
    onSuspend: record("suspend"),
    onResume: record("resume"),
    onCancel: record("cancel"),
  });
  return { webhook, calls };
}
