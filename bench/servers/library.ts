/** The library's public entries a benchmark server uses. */
interface Entries {
  index: typeof import("merchant-webhooks");
  express: typeof import("merchant-webhooks/express");
  fastify: typeof import("merchant-webhooks/fastify");
  redis: typeof import("merchant-webhooks/redis");
  node: typeof import("merchant-webhooks/node");
}

/**
 * An entry of the library under test: this repository's build (`dist`, as a user runs it, not the
 * sources through tsx), or with `BENCH_LIB=<dist directory>` another build of it (a baseline commit,
 * see `bench/build-baseline.ts`), so a change can be measured against the code before it in the same run.
 */
export function library<E extends keyof Entries>(entry: E): Promise<Entries[E]> {
  const dist = process.env.BENCH_LIB ?? new URL("../../dist", import.meta.url).pathname;
  return import(`${dist}/${entry}.js`) as Promise<Entries[E]>;
}
