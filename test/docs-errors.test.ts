import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { MerchantWebhooksError } from "merchant-webhooks";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const page = readFileSync(join(ROOT, "docs", "errors.md"), "utf8");

/** Every .ts file of the package's source, with its text. */
function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const at = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sources(at);
    return entry.name.endsWith(".ts") ? [{ path: at, text: readFileSync(join(ROOT, at), "utf8") }] : [];
  });
}
const files = [...sources("src"), ...sources("adapters")];

/** The codes the table lists, one per row. */
const listed = Array.from(page.matchAll(/^\| `(MW_[A-Z0-9_]+)` +\|/gm), (match) => match[1]!);
/** The section on errors left without a code: the classes and files it names. */
const uncoded = page.slice(page.indexOf("## Errors left without a code"));

/** `class X extends Y` for every class whose name or base says it is an error. */
const errorClasses = files.flatMap(({ path, text }) =>
  Array.from(text.matchAll(/class (\w+) extends (\w+)[^{]*\{/g), (match) => ({
    path,
    name: match[1]!,
    base: match[2]!,
    body: text.slice(match.index, text.indexOf("\n}", match.index)),
  })).filter((cls) => /Error$/.test(cls.name) || /Error$/.test(cls.base)),
);

describe("docs/errors.md", () => {
  it("lists every code the source uses, and no other", () => {
    const used = new Set(files.flatMap(({ text }) => Array.from(text.matchAll(/"(MW_[A-Z0-9_]+)"/g), (m) => m[1]!)));
    expect(used.size).toBeGreaterThan(40);
    expect(listed.filter((code) => !used.has(code)).sort(), "listed but not used").toEqual([]);
    expect([...used].filter((code) => !listed.includes(code)).sort(), "used but not listed").toEqual([]);
    expect(new Set(listed).size, "a code listed twice").toBe(listed.length);
  });

  it("has every error class extend MerchantWebhooksError, or named as left without a code", () => {
    const names = new Map(errorClasses.map((cls) => [cls.name, cls]));
    const isOurs = (name: string): boolean => {
      const cls = names.get(name);
      if (name === "MerchantWebhooksError") return true;
      if (!cls) return false;
      // A TypeError kept for callers who check it, with the code marked on each instance.
      return cls.body.includes("coded(this,") || isOurs(cls.base);
    };
    const stray = errorClasses
      .filter((cls) => !isOurs(cls.name) && !uncoded.includes(`\`${cls.name}\``))
      .map((cls) => `${cls.path}: ${cls.name} extends ${cls.base}`);
    expect(stray).toEqual([]);
    expect(errorClasses.length).toBeGreaterThan(20);
  });

  it("names the option in every options mistake: those codes are set by optionError, never by coded", () => {
    const OPTION_CODES = /"MW_(UNKNOWN_OPTION|UNKNOWN_HANDLER|INVALID_OPTION|INVALID_TIMEOUT)"/;
    const unnamed = files.flatMap(({ path, text }) =>
      Array.from(text.matchAll(/\bcoded\(/g))
        .map((match) => text.slice(match.index, text.indexOf(";", match.index)))
        .filter((call) => OPTION_CODES.test(call))
        .map((call) => `${path}: ${call.slice(0, 80)}`),
    );
    expect(unnamed).toEqual([]);
  });

  it("names every file that still throws a bare Error, TypeError or RangeError", () => {
    const bare = files
      .filter(({ text }) => /throw new (TypeError|RangeError|Error)\(/.test(text))
      .map(({ path }) => relative(ROOT, join(ROOT, path)));
    const unnamed = bare.filter((path) => !uncoded.includes(`\`${path}\``));
    expect(unnamed).toEqual([]);
  });
});

describe("MerchantWebhooksError", () => {
  it("is the base of the classes and holds for the coded TypeErrors and RangeErrors", async () => {
    const root = await import("merchant-webhooks");
    const store = new root.StoreUnavailableError("down");
    expect(store).toBeInstanceOf(MerchantWebhooksError);
    expect(store).toMatchObject({ name: "StoreUnavailableError", code: "MW_STORE_UNAVAILABLE", status: 503 });
    expect(new root.QueueFullError(3)).toMatchObject({ code: "MW_QUEUE_FULL", status: 503 });

    let unknown: unknown;
    try {
      root.memoryStore({ leaseMS: 5 } as never);
    } catch (err) {
      unknown = err;
    }
    expect(unknown).toBeInstanceOf(TypeError);
    expect(unknown).toBeInstanceOf(MerchantWebhooksError);
    expect(unknown).toMatchObject({ code: "MW_UNKNOWN_OPTION" });
    expect(String((unknown as Error).message)).toContain('unknown option "leaseMS"');

    // A subclass's instanceof stays the prototype check: a coded TypeError is not a StoreUnavailableError.
    expect(unknown).not.toBeInstanceOf(root.StoreUnavailableError);
    expect(new TypeError("not ours")).not.toBeInstanceOf(MerchantWebhooksError);
  });

  it("gives parseNotification's refusals their code beside the status", async () => {
    const { hmacVerifier, parseNotification } = await import("merchant-webhooks");
    const verify = hmacVerifier({ secret: "a".repeat(32), header: "x-signature" });
    const refused = await parseNotification("{}", { "content-type": "application/json" }, { verify }).catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(MerchantWebhooksError);
    expect(refused).toMatchObject({ code: "MW_SIGNATURE_FAILED", status: 401, reason: "no_signature_header" });
    const invalid = await parseNotification("{}", { "content-type": "application/json" }).catch((err: unknown) => err);
    expect(invalid).toMatchObject({ name: "NotificationError", code: "MW_NOTIFICATION_INVALID", status: 400 });
  });

  it.each([
    [
      "a negative handlerTimeoutMs",
      RangeError,
      "MW_INVALID_TIMEOUT",
      async () => {
        const { createReceiver } = await import("merchant-webhooks");
        createReceiver({ handlerTimeoutMs: -1 });
      },
    ],
    [
      "a short HMAC secret",
      RangeError,
      "MW_WEAK_SECRET",
      async () => {
        const { hmacVerifier } = await import("merchant-webhooks");
        hmacVerifier({ secret: "short", header: "x-signature" });
      },
    ],
    [
      "a Standard Webhooks secret that is not base64",
      TypeError,
      "MW_INVALID_SECRET",
      async () => {
        const { standardWebhooksVerifier } = await import("merchant-webhooks");
        standardWebhooksVerifier("whsec_!!!");
      },
    ],
    [
      "no Redis connection",
      TypeError,
      "MW_CONNECTION_MISSING",
      async () => {
        const { redisStore } = await import("merchant-webhooks/redis");
        redisStore({ connection: undefined as never });
      },
    ],
    [
      "a payment client without baseUrl",
      TypeError,
      "MW_INVALID_OPTION",
      async () => {
        const { createPaymentClient } = await import("merchant-webhooks/client");
        createPaymentClient({} as never);
      },
    ],
  ] as const)("refuses %s with its type and code", async (_, type, code, call) => {
    const thrown = await call().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(thrown).toBeInstanceOf(type);
    expect(thrown).toBeInstanceOf(MerchantWebhooksError);
    expect(thrown).toMatchObject({ code });
  });
});

/** The row of docs/errors.md's table for `code`. */
const rowOf = (code: string): string => page.split("\n").find((line) => line.startsWith(`| \`${code}\` `)) ?? "";

describe("the examples docs/errors.md gives", () => {
  it("runs the page's first example: HANDLER_TIMEOUT_MS that is not a number is found by code and option", async () => {
    const { createReceiver } = await import("merchant-webhooks");
    const env = { HANDLER_TIMEOUT_MS: "ten seconds" };
    const thrown = (() => {
      try {
        createReceiver({ onCreated() {}, handlerTimeoutMs: Number(env.HANDLER_TIMEOUT_MS ?? 10_000) });
      } catch (err) {
        return err;
      }
    })();
    expect(thrown).toBeInstanceOf(RangeError);
    expect(thrown).toBeInstanceOf(MerchantWebhooksError);
    expect(thrown).toMatchObject({ code: "MW_INVALID_TIMEOUT", option: "handlerTimeoutMs" });
    expect(page).toContain('err.code === "MW_INVALID_TIMEOUT" && err.option === "handlerTimeoutMs"');
  });

  it.each([
    [
      "MW_UNKNOWN_HANDLER",
      "`onRenewal` for `onRenew`",
      "onRenewal",
      async () => {
        const { createReceiver } = await import("merchant-webhooks");
        createReceiver({ onRenewal() {} } as never);
      },
    ],
    [
      "MW_UNKNOWN_OPTION",
      "misspelling",
      "basepath",
      async () => {
        const { consoleHandler, createAdmin } = await import("merchant-webhooks/console");
        const { memoryStore } = await import("merchant-webhooks");
        const admin = createAdmin({ idempotency: memoryStore() });
        consoleHandler({ admin, authorize: () => true, basepath: "/ops" } as never);
      },
    ],
    [
      "MW_INVALID_OPTION",
      "`retry.attempts` when nested",
      "retry.attempts",
      async () => {
        const { createPaymentClient } = await import("merchant-webhooks/client");
        createPaymentClient({ baseUrl: "https://pay.example", retry: { attempts: 0 } } as never);
      },
    ],
    [
      "MW_INVALID_TIMEOUT",
      "`handlerTimeoutMs` past `leaseMs` without renewal",
      "handlerTimeoutMs",
      async () => {
        const { createReceiver } = await import("merchant-webhooks");
        const store = { claim: async () => ({}), get: async () => undefined, complete: async () => true } as never;
        createReceiver({ onCreated() {}, idempotency: store, handlerTimeoutMs: 20_000, leaseMs: 10_000 } as never);
      },
    ],
  ] as const)("gives %s for its example (%s), naming the option", async (code, example, option, call) => {
    expect(rowOf(code)).toContain(example);
    const thrown = await call().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(thrown).toBeInstanceOf(MerchantWebhooksError);
    expect(thrown).toMatchObject({ code, option });
  });
});
