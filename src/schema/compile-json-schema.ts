import { coded } from "../shared/errors.js";
/**
 * A JSON Schema (the subset `z.toJSONSchema` writes for the notification schema) turned into one
 * boolean check made of closures: no code is generated, so it runs where `new Function` is refused
 * (Workers, a strict CSP). It answers only yes or no; the error message is zod's. A keyword it does not
 * know makes `compileJsonSchema` throw, so a schema change it cannot follow is seen at once, never
 * silently accepted.
 */
export type Check = (value: unknown) => boolean;

type Schema = Record<string, unknown>;

const always: Check = () => true;

/**
 * Keywords that only describe: `format` is ignored because zod writes its own `pattern` beside it
 * (checked below), and that pattern is what zod tests.
 */
const DESCRIPTIVE = new Set(["$schema", "description", "title", "format", "examples", "default"]);

export function compileJsonSchema(schema: unknown): Check {
  if (schema === true || (isObject(schema) && Object.keys(schema).every((key) => DESCRIPTIVE.has(key)))) return always;
  if (!isObject(schema))
    throw coded(new TypeError(`unsupported schema ${JSON.stringify(schema)}`), "MW_UNSUPPORTED_SCHEMA");
  if (schema.format !== undefined && schema.pattern === undefined)
    throw coded(new TypeError(`format "${String(schema.format)}" without a pattern`), "MW_UNSUPPORTED_SCHEMA");
  const checks: Check[] = [];
  for (const key of Object.keys(schema)) {
    if (!DESCRIPTIVE.has(key) && !KNOWN.has(key))
      throw coded(new TypeError(`unsupported JSON Schema keyword "${key}"`), "MW_UNSUPPORTED_SCHEMA");
  }
  if (schema.anyOf !== undefined) {
    const options = (schema.anyOf as unknown[]).map(compileJsonSchema);
    checks.push((value) => options.some((option) => option(value)));
  }
  switch (schema.type) {
    case undefined:
      break;
    case "object":
      checks.push(objectCheck(schema));
      break;
    case "array": {
      const item = schema.items === undefined ? always : compileJsonSchema(schema.items);
      checks.push((value) => Array.isArray(value) && value.every((entry) => item(entry)));
      break;
    }
    case "string":
      checks.push(stringCheck(schema));
      break;
    case "boolean":
      checks.push((value) => typeof value === "boolean");
      break;
    case "integer":
    case "number": {
      const integer = schema.type === "integer";
      const min = (schema.minimum as number | undefined) ?? -Infinity;
      const max = (schema.maximum as number | undefined) ?? Infinity;
      checks.push(
        (value) =>
          typeof value === "number" &&
          Number.isFinite(value) &&
          (!integer || Number.isInteger(value)) &&
          value >= min &&
          value <= max,
      );
      break;
    }
    default:
      throw coded(new TypeError(`unsupported type ${JSON.stringify(schema.type)}`), "MW_UNSUPPORTED_SCHEMA");
  }
  if (checks.length === 1) return checks[0]!;
  return (value) => checks.every((check) => check(value));
}

const KNOWN = new Set([
  "type",
  "anyOf",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
]);

function objectCheck(schema: Schema): Check {
  const properties = Object.entries((schema.properties as Record<string, unknown> | undefined) ?? {}).map(
    ([key, rule]) => [key, compileJsonSchema(rule)] as const,
  );
  const required = (schema.required as string[] | undefined) ?? [];
  const known = new Set(properties.map(([key]) => key));
  const extra = schema.additionalProperties === undefined ? always : compileJsonSchema(schema.additionalProperties);
  // Every key a `for … in` yields is a string: `propertyNames: {type: "string"}` (a record's, as zod
  // writes `z.record(z.string(), …)`) holds for any object, and a free map is then not walked at all.
  const names =
    schema.propertyNames === undefined || isAnyString(schema.propertyNames)
      ? always
      : compileJsonSchema(schema.propertyNames);
  const checksExtra = extra !== always || names !== always;
  return (value) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
    const object = value as Record<string, unknown>;
    for (let i = 0; i < required.length; i++) if (!Object.hasOwn(object, required[i]!)) return false;
    for (let i = 0; i < properties.length; i++) {
      const [key, check] = properties[i]!;
      // A present key with `undefined` cannot come from JSON; zod treats it as absent too.
      const item = object[key];
      if (item !== undefined && Object.hasOwn(object, key) && !check(item)) return false;
    }
    if (checksExtra) {
      for (const key in object) {
        if (!Object.hasOwn(object, key)) continue;
        if (!names(key)) return false;
        if (!known.has(key) && !extra(object[key])) return false;
      }
    }
    return true;
  };
}

/** A schema every string meets: `type: "string"` with nothing beside it but descriptions. */
function isAnyString(schema: unknown): boolean {
  return (
    isObject(schema) &&
    schema.type === "string" &&
    Object.keys(schema).every((key) => key === "type" || (key !== "format" && DESCRIPTIVE.has(key)))
  );
}

function stringCheck(schema: Schema): Check {
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = (schema.maxLength as number | undefined) ?? Infinity;
  // zod's own expression, without the `u` flag, as zod runs it.
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern as string);
  return (value) => {
    if (typeof value !== "string") return false;
    // Lengths as zod counts them, in code points: a pair of surrogates is one. The count is needed only
    // where UTF-16 units and code points could fall on either side of a bound.
    const units = value.length;
    if (units < min || (units > max && codePoints(value) > max)) return false;
    if (units < 2 * min && codePoints(value) < min) return false;
    return pattern === undefined || pattern.test(value);
  };
}

function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
