import app from "../fetch/handler.js";

// `bun run examples/bun/server.ts`: Bun serves the default export's `fetch` on `port`. The handler is
// the fetch example's (examples/fetch/handler.ts), unchanged: Fetch API and Web Crypto only.
export default { port: Number(process.env.PORT ?? 3000), fetch: app.fetch };
