import { eventNamesList, eventTypeNamed } from "../schema/event-names.js";
import { type SubscriptionEventType, subscriptionEventRows } from "../schema/event-types.js";
import { MerchantWebhooksError } from "../shared/errors.js";
import type { PlatformSimulator } from "./create-platform-simulator.js";
import type { SimulatedSubscription } from "./subscriptions.js";

export const SCENARIO_COMMANDS = `Scenario commands (one per line; # starts a comment):
  create <name> [merchant=<id>] [subscriber=<id>] [product=<id>]   create a subscription (SUBSCRIPTION_CREATED)
  renew <name>                  SUBSCRIPTION_RENEW (the next phase)
  suspend <name> [reason...]    SUBSCRIPTION_SUSPENDED
  resume <name>                 SUBSCRIPTION_RESUMED
  cancel <name> [reason...]     SUBSCRIPTION_CANCELLED
  settle                        wait until every delivery is processed or has used up its schedule
  sleep <ms>                    wait (not scaled)
  log                           the attempt log as a table
  pending                       deliveries not processed: exhausted and pending
<name> is the name given at create, or the subscription id. An event may be named by any of its
names, in any case (cancel, cancelled, onCancel, SUBSCRIPTION_CANCELLED):
${eventNamesList()}`;

/** A scenario line that cannot be run: unknown command, unknown subscription, bad argument. */
export class ScenarioError extends MerchantWebhooksError {
  override readonly name = "ScenarioError";
  constructor(message: string) {
    super("MW_SIMULATOR_SCENARIO", message);
  }
}

type LifecycleCall = (
  sub: SimulatedSubscription,
  reason: string | undefined,
) => Promise<{ id: string; event_type: string }>;

const LIFECYCLE: Readonly<Partial<Record<SubscriptionEventType, LifecycleCall>>> = {
  SUBSCRIPTION_RENEW: (sub) => sub.renew(),
  SUBSCRIPTION_SUSPENDED: (sub, reason) => sub.suspend(reason),
  SUBSCRIPTION_RESUMED: (sub) => sub.resume(),
  SUBSCRIPTION_CANCELLED: (sub, reason) => sub.cancel(reason),
};

const OTHER_COMMANDS = ["settle", "sleep", "log", "pending"];
const EVENT_VERBS = subscriptionEventRows().map(([, row]) => row.verb);

/**
 * Runs scenario lines against a simulator, one at a time, each answering a line of text; names given
 * at `create` stand for the subscription in later lines.
 */
export function scenarioRunner(sim: PlatformSimulator) {
  const named = new Map<string, SimulatedSubscription>();

  function subscription(name: string | undefined): SimulatedSubscription {
    const found = name === undefined ? undefined : (named.get(name) ?? sim.subscriptions.get(name));
    if (!found) throw new ScenarioError(`no subscription "${name ?? ""}": create it first`);
    return found;
  }

  return async function run(line: string): Promise<string> {
    const words = line.replace(/#.*/, "").trim().split(/\s+/).filter(Boolean);
    const [word, name, ...rest] = words;
    if (word === undefined) return "";
    const command = word.toLowerCase();
    const event = eventTypeNamed(command);
    if (event === "SUBSCRIPTION_CREATED") {
      if (name === undefined) throw new ScenarioError("create needs a name");
      if (named.has(name)) throw new ScenarioError(`"${name}" exists already`);
      const fields = Object.fromEntries(rest.map((word) => word.split("=", 2) as [string, string]));
      const sub = await sim.subscriptions.create({
        merchant_id: fields.merchant ?? "M-SIMULATOR",
        subscriber: { id: fields.subscriber ?? `U-${name}` },
        product: { id: fields.product ?? "P-SIMULATOR", name: "Simulated plan" },
      });
      named.set(name, sub);
      return `created ${name} ${sub.id}\n`;
    }
    const lifecycle = event && LIFECYCLE[event];
    if (lifecycle) {
      const sub = subscription(name);
      const sent = await lifecycle(sub, rest.length > 0 ? rest.join(" ") : undefined);
      return `${word} ${name} ${sub.id} ${sent.id} ${sent.event_type}\n`;
    }
    switch (command) {
      case "settle": {
        await sim.settled();
        const deliveries = sim.deliveries();
        const delivered = deliveries.filter((delivery) => delivery.delivered).length;
        return `settled: ${delivered} delivered, ${deliveries.length - delivered} undelivered\n`;
      }
      case "sleep": {
        const ms = Number(name);
        if (!Number.isFinite(ms) || ms < 0)
          throw new ScenarioError(`sleep needs a number of ms, got ${name ?? "nothing"}`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        return "";
      }
      case "log":
        return sim.attemptTable();
      case "pending":
        return sim.undeliveredTable();
      default:
        throw new ScenarioError(
          `unknown command "${word}": the commands are ${[...EVENT_VERBS, ...OTHER_COMMANDS].join(", ")} ` +
            "(an event may also be named as its handler or event_type: onCancel, SUBSCRIPTION_CANCELLED)",
        );
    }
  };
}

/** Run every line of a scenario text; returns what the lines answered. */
export async function runScenario(sim: PlatformSimulator, text: string): Promise<string> {
  const run = scenarioRunner(sim);
  let out = "";
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    try {
      out += await run(line);
    } catch (err) {
      if (err instanceof ScenarioError) throw new ScenarioError(`line ${index + 1}: ${err.message}`);
      throw err;
    }
  }
  return out;
}
