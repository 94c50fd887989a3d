import { readFileSync } from "node:fs";

/** The benchmarks' renewal notification as compact JSON, split around its id so each body is one concatenation. */
const template = JSON.stringify(
  JSON.parse(readFileSync(new URL("../test/fixtures/renewal.json", import.meta.url), "utf8")),
);
const idAt = template.indexOf('"id":"');
const head = template.slice(0, idAt);
const tail = template.slice(template.indexOf('"', idAt + 6) + 1);
const encoder = new TextEncoder();

export const JSON_HEADERS = { "content-type": "application/json" };

/** The renewal's bytes with `id` as its notification id. */
export const renewalBody = (id: string) => encoder.encode(`${head}"id":"${id}"${tail}`);
