/** The library's public entries a benchmark server uses. */
interface Entries {
  index: typeof import("merchant-webhooks");
  express: typeof import("merchant-webhooks/express");
  fastify: typeof import("merchant-webhooks/fastify");
  redis: typeof import("merchant-webhooks/redis");
}

/**
 * An entry of the library under test: the package's own build, or with `BENCH_LIB=<dist directory>`
 * another build of it (a baseline commit, see `bench/build-baseline.ts`), so a change can be measured
 * against the code before it in the same run.
 */
export function library<E extends keyof Entries>(entry: E): Promise<Entries[E]> {
  const dist = process.env.BENCH_LIB;
  if (dist) return import(`${dist}/${entry}.js`) as Promise<Entries[E]>;
  return import(entry === "index" ? "merchant-webhooks" : `merchant-webhooks/${entry}`) as Promise<Entries[E]>;
}
