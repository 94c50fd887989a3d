import { seededRandom } from "../../src/simulator/random.js";
import { notification } from "../support/notifications.js";

/** One malformed delivery: the bytes, the content-type sent, and which family it belongs to. */
export interface BadBody {
  kind: string;
  body: Uint8Array;
  contentType: string;
}

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);

/** Deterministic pseudo-random numbers (the simulator's mulberry32), so a failure names a reproducible case. */
const random = seededRandom;

/** Paths of every field the schema types (free maps hold any value, so they are left out). */
function typedPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== "object") return [path];
  const key = path[path.length - 1];
  if (key === "metadata" || key === "merchant_metadata") return [];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return [...(path.length ? [path] : []), ...entries.flatMap(([k, v]) => typedPaths(v, [...path, k]))];
}

function wrongValuesFor(original: unknown): unknown[] {
  if (typeof original === "string") return [123, true, null, [], { s: 1 }];
  if (typeof original === "number") return ["12x", false, null, [1], {}];
  if (typeof original === "boolean") return ["true", 1, null, [], {}];
  if (Array.isArray(original)) return ["list", 7, { 0: 1 }, null, [1, "two", null]];
  return ["object", 9, true, null, [original]];
}

function setAt(target: any, path: (string | number)[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path[path.length - 1]!] = value;
}

export function generateBadBodies(bodyLimit: number): BadBody[] {
  const rand = random(20261123);
  const out: BadBody[] = [];
  const json = "application/json";
  const base = notification("SUBSCRIPTION_RENEW", "bad-input-base");
  const text = JSON.stringify(base);

  // Truncated JSON: every strict prefix of a notification.
  for (let i = 0; i < text.length; i++)
    out.push({ kind: "truncated", body: bytes(text.slice(0, i)), contentType: json });

  // A wrong type at every typed path.
  for (const path of typedPaths(base)) {
    let original: any = base;
    for (const key of path) original = original[key];
    for (const wrong of wrongValuesFor(original)) {
      const copy = structuredClone(base);
      setAt(copy, path, wrong);
      out.push({ kind: "wrong-type", body: bytes(JSON.stringify(copy)), contentType: json });
    }
  }

  // Required fields missing, alone and together.
  const required = [["id"], ["event_type"], ["resource"], ["resource", "execution_phase"]];
  for (let mask = 1; mask < 16; mask++) {
    const copy = structuredClone(base) as any;
    required.forEach((path, i) => {
      if (mask & (1 << i)) {
        if (path.length === 1) delete copy[path[0]!];
        else if (copy.resource) delete copy.resource[path[1]!];
      }
    });
    out.push({ kind: "missing-required", body: bytes(JSON.stringify(copy)), contentType: json });
  }

  // Invalid UTF-8 inside the JSON text: lone lead bytes, stray continuations, encoded surrogates, overlongs.
  const poisons = [[0xff], [0xc3], [0x80], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80]];
  const raw = bytes(text);
  for (let i = 0; i < 2_000; i++) {
    const at = 1 + Math.floor(rand() * (raw.length - 2));
    const poison = poisons[i % poisons.length]!;
    const body = new Uint8Array(raw.length + poison.length);
    body.set(raw.subarray(0, at), 0);
    body.set(poison, at);
    body.set(raw.subarray(at), at + poison.length);
    out.push({ kind: "invalid-utf8", body, contentType: json });
  }

  // JSON that is not an object.
  for (const value of ["null", "true", "false", "0", "-1.5e300", '"text"', "[]", "[{}]", `[${text}]`, '""', "1e999"]) {
    out.push({ kind: "not-object", body: bytes(value), contentType: json });
  }

  // Prototype-polluting keys on notifications that are otherwise broken.
  for (let i = 0; i < 200; i++) {
    const copy = structuredClone(base) as any;
    delete copy.resource.execution_phase;
    const polluted = JSON.stringify(copy).replace(
      '"resource":{',
      `"resource":{"__proto__":{"execution_phase":"${i}"},"constructor":{"prototype":{"x${i}":1}},`,
    );
    out.push({
      kind: "proto-keys",
      body: bytes(i % 2 ? polluted : polluted.replace(/__proto__/g, "\\u005f_proto__")),
      contentType: json,
    });
  }

  // Deep nesting, as the whole body and inside a typed field.
  for (const depth of [10, 100, 1_000, 5_000, 20_000, 50_000]) {
    out.push({ kind: "deep-nesting", body: bytes(`${"[".repeat(depth)}${"]".repeat(depth)}`), contentType: json });
    const nested = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    // execution_phase must be a string, so the nested object makes the notification invalid.
    const inField = text.replace(/"execution_phase":"[^"]*"/, `"execution_phase":${nested}`);
    if (inField.length < bodyLimit) out.push({ kind: "deep-nesting", body: bytes(inField), contentType: json });
  }

  // Strings over their limits, and huge arrays of invalid elements, all within the body limit.
  for (let i = 0; i < 100; i++) {
    const copy = structuredClone(base) as any;
    const long = "x".repeat(1_001 + Math.floor(rand() * 50_000));
    if (i % 3 === 0) copy.resource.subscriber.id = long;
    else if (i % 3 === 1) copy.resource.renewal_event.payment_detail.purchase_units[0].description = long;
    else copy.resource.subscriber.address.postal_code = long;
    out.push({ kind: "huge-string", body: bytes(JSON.stringify(copy)), contentType: json });
  }
  for (let i = 0; i < 50; i++) {
    const copy = structuredClone(base) as any;
    copy.resource.renewal_event.payment_detail.purchase_units = Array.from({ length: 1_000 + i * 100 }, (_, k) => k);
    out.push({ kind: "huge-array", body: bytes(JSON.stringify(copy)), contentType: json });
  }

  // Bodies over the limit.
  for (let i = 0; i < 50; i++) {
    out.push({ kind: "oversized", body: bytes(`{"pad":"${"y".repeat(bodyLimit + i * 997)}"}`), contentType: json });
  }

  // A valid notification under content types that are not JSON.
  const types = [
    "text/plain",
    "text/html",
    "application/xml",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/octet-stream",
    "application/json; charset=utf-16",
    "application/jsonp",
    "image/png",
    "json",
  ];
  for (let i = 0; i < 200; i++) {
    out.push({
      kind: "wrong-content-type",
      body: bytes(JSON.stringify(notification())),
      contentType: types[i % types.length]!,
    });
  }

  // Random bytes.
  for (let i = 0; i < 5_500; i++) {
    const body = new Uint8Array(1 + Math.floor(rand() * 200));
    for (let k = 0; k < body.length; k++) body[k] = Math.floor(rand() * 256);
    out.push({ kind: "random-bytes", body, contentType: json });
  }
  return out;
}
